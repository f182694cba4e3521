"""Packaging, as a user meets it: the dependency lists agree (pyproject.toml and dev/setup); the jar
published into a Maven repository loads into Spark through ``spark.jars.packages`` alone; the sdist
carries the sources (not a jar) and a wheel builds from it, compiling the jar; that wheel, installed
with pip into a fresh venv outside the repository, imports, runs the ``arrnf`` command and a session.

All but the first are marked ``slow``: they run sbt, pip and Spark JVMs of their own in subprocesses
(never the session fixture's JVM), a few minutes together; ``-m "not slow"`` leaves them out. They
need what dev/setup installs (``build``, setuptools>=77) and PyPI or pip's cache for the fresh venv.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import textwrap
import venv
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

import pyspark_arrnf
from pyspark_arrnf._version import JAR_NAME

ROOT = Path(__file__).resolve().parents[1]
VERSION = pyspark_arrnf.__version__
GROUP, ARTIFACT = "io.github.pyspark-arrnf", "arrnf-jvm-rules_2.13"
COORDINATES = f"{GROUP}:{ARTIFACT}:{VERSION}"
GROUP_BY = "select k, count(*) from range(10) t(k) group by k"


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing of this checkout or of the test harness."""
    env = {k: v for k, v in os.environ.items() if k not in (
        "PYTHONPATH", "VIRTUAL_ENV", "ARRNF_JAR", "SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON",
        "PYSPARK_SUBMIT_ARGS", "SPARK_TESTING", "ARRNF_SPARK_JARS")}
    env.update(extra)
    return env


def _run(cmd: list[str], cwd: Path, timeout: int, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, cwd=cwd, env=env or _clean_env(), capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{shlex.join(cmd)} failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-5000:]}"
    return out


# -- dependencies ------------------------------------------------------------------------------------


def _declared() -> list:
    """pyproject.toml's build requirements, dependencies and every extra's, self-references expanded."""
    tomllib = pytest.importorskip("tomllib")
    from packaging.requirements import Requirement

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = [Requirement(r) for r in meta["build-system"]["requires"] + meta["project"]["dependencies"]]
    for extra in meta["project"]["optional-dependencies"].values():
        reqs += [r for r in map(Requirement, extra) if r.name != meta["project"]["name"]]
    return reqs


def _dev_setup_requirements() -> list:
    """The requirements dev/setup passes to its one `pip install` before building the jar."""
    from packaging.requirements import Requirement

    text = (ROOT / "dev" / "setup").read_text()
    m = re.search(r'pip install -q \\\n(.*?)\nbash dev/build-jar', text, re.S)
    assert m, "dev/setup: no `pip install -q \\` of the dependencies before `bash dev/build-jar`"
    return [Requirement(w) for w in shlex.split(m.group(1).replace("\\\n", " "))]


def test_dev_setup_installs_what_pyproject_declares():
    """dev/setup must bring everything a wheel's user and the tests need (the Spark Connect client
    with it), and nothing pyproject.toml does not declare, with the same version ranges."""
    from packaging.utils import canonicalize_name

    declared, installed = _declared(), _dev_setup_requirements()
    by_name = {}
    for r in installed:
        by_name.setdefault(canonicalize_name(r.name), []).append(r)
    for r in declared:
        matches = [s for s in by_name.get(canonicalize_name(r.name), [])
                   if s.extras >= r.extras and (not r.specifier or s.specifier == r.specifier)]
        assert matches, f"dev/setup does not install {r} (pyproject.toml declares it)"
    declared_names = {canonicalize_name(r.name) for r in declared}
    assert set(by_name) <= declared_names, f"dev/setup installs undeclared {set(by_name) - declared_names}"
    # the range the jar check accepts (jar.py: same major.minor)
    spark = [r for r in declared if r.name == "pyspark"]
    assert spark and all(r.specifier.contains("4.3.0") and r.specifier.contains("4.3.9")
                         and not r.specifier.contains("4.4.0") and not r.specifier.contains("4.2.9") for r in spark)


# -- the jar through a Maven repository --------------------------------------------------------------


def _spark_jars() -> str:
    import pyspark

    return os.path.join(os.path.dirname(pyspark.__file__), "jars")


@pytest.mark.slow
def test_the_published_jar_loads_through_spark_jars_packages(tmp_path):
    """`dev/sbt -Dmaven.repo.local=DIR jvmRules/publishM2` publishes the README's coordinates; a new
    Spark, given only those coordinates and that repository (Ivy settings with no other resolver,
    so nothing can come from the network), resolves the jar alone and loads the extension."""
    repo, ivy = tmp_path / "m2", tmp_path / "ivy"
    _run(["bash", "dev/sbt", f"-Dmaven.repo.local={repo}", "jvmRules/publishM2"], ROOT, 900,
         _clean_env(ARRNF_SPARK_JARS=_spark_jars()))
    folder = repo / GROUP.replace(".", "/") / ARTIFACT / VERSION
    pom = folder / f"{ARTIFACT}-{VERSION}.pom"
    assert (folder / f"{ARTIFACT}-{VERSION}.jar").is_file() and pom.is_file(), sorted(map(str, repo.rglob("*")))
    # Spark resolves compile and runtime dependencies: there must be none (Scala and Spark are Spark's own)
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    deps = [(d.findtext("m:artifactId", namespaces=ns), d.findtext("m:scope", namespaces=ns))
            for d in ET.parse(pom).getroot().findall("m:dependencies/m:dependency", ns)]
    assert [a for a, scope in deps if scope in (None, "compile", "runtime")] == [], deps

    settings = tmp_path / "ivysettings.xml"
    settings.write_text(textwrap.dedent(f"""\
        <ivysettings>
          <settings defaultResolver="only-this-repo"/>
          <resolvers><ibiblio name="only-this-repo" m2compatible="true" root="{repo.as_uri()}"/></resolvers>
        </ivysettings>
        """))
    script = tmp_path / "packages.py"
    script.write_text(textwrap.dedent(f"""\
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.jars.packages", {COORDINATES!r})
                 .config("spark.jars.ivySettings", {str(settings)!r})
                 .config("spark.jars.ivy", {str(ivy)!r})
                 .config("spark.sql.extensions", "arrnf.ArrnfExtension")
                 .getOrCreate())
        print("ARRNF VERSION", spark._jvm.arrnf.Api.version())
        print(spark.sql("select arrnf_text({GROUP_BY!r})").first()[0])
        spark.stop()
        """))
    # no pyspark_arrnf on the path: the extension comes from the Maven repository only
    out = _run([sys.executable, str(script)], tmp_path, 600)
    assert f"ARRNF VERSION {VERSION}" in out.stdout, out.stderr[-3000:]
    assert "Reduce keys=" in out.stdout, out.stdout
    assert (ivy / "jars" / f"{GROUP}_{ARTIFACT}-{VERSION}.jar").is_file()


# -- sdist, wheel, fresh venv ------------------------------------------------------------------------


def _source_copy(dest: Path) -> Path:
    """The checkout's files as a fresh clone has them (tracked, or new and not ignored): a sdist made
    in the checkout itself would also take whatever an earlier build left in its *.egg-info/SOURCES.txt."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: cannot tell the sources from build leftovers")
    for name in filter(None, listed.stdout.split("\0")):
        src, dst = ROOT / name, dest / name
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return dest


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    src = _source_copy(tmp_path_factory.mktemp("clone"))
    _run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(out), str(src)], out, 600)
    (tgz,) = out.glob("pyspark_arrnf-*.tar.gz")
    return tgz


@pytest.fixture(scope="module")
def wheel_from_sdist(sdist, tmp_path_factory) -> Path:
    """The wheel pip builds from the sdist as a user's `pip install pyspark-arrnf-<v>.tar.gz` would:
    build isolation (setuptools and PySpark from the build requirements), the jar compiled by sbt."""
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
          "-w", str(out), str(sdist)], out, 900)
    (whl,) = out.glob("pyspark_arrnf-*.whl")
    return whl


@pytest.mark.slow
def test_the_sdist_carries_the_sources_and_no_jar(sdist):
    assert sdist.name == f"pyspark_arrnf-{VERSION}.tar.gz"
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for needed in ("README.md", "pyproject.toml", "setup.py", "MANIFEST.in", "build.sbt", "project/build.properties",
                   "dev/build-jar", "dev/sbt", "dev/setup", "docs/arrnf-json.md", "pyspark_arrnf/_version.py",
                   "pyspark_arrnf/workloads/NOTICE.md", "pyspark_arrnf/workloads/tpch/q1.sql",
                   "jvm-rules/src/main/scala/arrnf/ArrnfExtension.scala", "tests/test_packaging.py"):
        assert needed in names, needed
    assert sum(n.startswith("jvm-rules/src/main/scala/") and n.endswith(".scala") for n in names) > 20
    assert not [n for n in names if n.endswith(".jar") or "/target/" in n or n.startswith("target/")]


@pytest.mark.slow
def test_a_wheel_builds_from_the_sdist_with_the_jar_compiled(wheel_from_sdist):
    names = zipfile.ZipFile(wheel_from_sdist).namelist()
    assert [n for n in names if n.endswith(".jar")] == [f"pyspark_arrnf/jars/{JAR_NAME}"]
    with zipfile.ZipFile(wheel_from_sdist) as w, w.open(f"pyspark_arrnf/jars/{JAR_NAME}") as j:
        props = zipfile.ZipFile(j).read("arrnf-build.properties").decode()
    assert f"arrnf.version={VERSION}" in props and re.search(r"spark\.version=4\.3\.", props), props
    assert sum(n.startswith("pyspark_arrnf/workloads/tpcds/") for n in names) == 103
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(wheel_from_sdist).read(meta).decode()
    for line in ("Requires-Dist: pyspark<4.4,>=4.3", "Provides-Extra: viz", "Provides-Extra: connect",
                 'Requires-Dist: pyspark[connect]<4.4,>=4.3; extra == "connect"', "Provides-Extra: dev"):
        assert line in metadata, line


@pytest.mark.slow
def test_the_wheel_works_installed_in_a_fresh_venv(wheel_from_sdist, tmp_path):
    """pip resolves the dependencies from the wheel's metadata (PySpark included) into a new venv;
    from a folder outside the checkout: the package imports from site-packages, `arrnf --help`
    and `arrnf --version` run, and a session loads the bundled jar and shows a query in ArrNF."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py, bin_dir = env_dir / "bin" / "python", env_dir / "bin"
    _run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel_from_sdist)], tmp_path, 900)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = _clean_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")

    _run([str(py), "-c", "import pyspark_arrnf, sys; assert 'site-packages' in pyspark_arrnf.__file__, "
          "pyspark_arrnf.__file__"], work, 120, env)
    out = _run([str(bin_dir / "arrnf"), "--help"], work, 120, env)
    assert "explain" in out.stdout, out.stdout
    out = _run([str(bin_dir / "arrnf"), "--version"], work, 120, env)
    assert out.stdout.startswith(f"arrnf {VERSION} (jar {VERSION}, built for Spark 4.3."), out.stdout
    out = _run([str(py), "-c", textwrap.dedent(f"""\
        import pyspark_arrnf
        spark = pyspark_arrnf.session("local[1]", spark_ui_enabled="false")
        print("JAR", pyspark_arrnf.jar_path())
        print(pyspark_arrnf.arrnf({GROUP_BY!r}))
        spark.stop()
        """)], work, 600, env)
    assert f"JAR {env_dir}" in out.stdout and JAR_NAME in out.stdout, out.stdout
    assert "Reduce" in out.stdout and "ArrNF" in out.stdout, out.stdout + out.stderr[-3000:]
