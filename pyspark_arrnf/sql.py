"""An ArrNF program written back as ONE SQL statement (seed: "Reversing out SQL").

``WITH`` holds one CTE per block in dependency order; a block's body is the ``UNION ALL`` of its
select-project-join terms (``[Negate] Unary* Leaf`` branches) with the negated ones last as
``EXCEPT ALL``; the head becomes ``GROUP BY`` (Reduce, Distinct), a window (Reduce window), a
ranked filter (TopK by rank), ``ORDER BY … LIMIT`` (TopK) or ``EXCEPT ALL`` / ``INTERSECT ALL``
(Threshold). The finishing ``ORDER BY`` / ``LIMIT`` closes the statement.

The statement is built as a sqlglot syntax tree from the normalizer's SQL forms (the ``sql`` fields
of the JSON, docs/arrnf-sql.md: Catalyst's ``Expression.sql`` with column placeholders `` `#n` ``)
and printed by sqlglot: Spark SQL, or other dialects as best effort.

A block with no SQL form (an Opaque leaf, a FlatMap or filter without one, a correlated subquery…)
becomes a CTE that says so in a comment and fails when run (``raise_error``); :func:`to_sql` warns
with :class:`ArrnfSqlWarning`. It never writes SQL that silently computes something else.

>>> from pyspark_arrnf.examples import EXAMPLE_JSON
>>> from pyspark_arrnf.model import Program
>>> print(to_sql(Program.from_json(EXAMPLE_JSON)).splitlines()[0])  # doctest: +SKIP
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Optional

import sqlglot
from sqlglot import exp

from .errors import ArrnfSqlWarning

__all__ = ["to_sql", "sql_problems", "ArrnfSqlWarning", "DIALECTS"]

DIALECTS = ("spark", "duckdb", "postgres")
_READ = "spark"
_PLACEHOLDER = re.compile(r"^#(\d+)$")


class NoSql(Exception):
    """Raised while writing a block that has no SQL form."""


# ---------------------------------------------------------------- parsing the SQL forms


def _parse(s: str) -> exp.Expression:
    try:
        return sqlglot.parse_one(s, read=_READ)
    except Exception as e:  # noqa: BLE001 - sqlglot's ParseError/TokenError
        raise NoSql(f"sqlglot cannot parse {s!r}: {str(e).splitlines()[0]}") from None


def _parse_list(s: str) -> list[exp.Expression]:
    return list(_parse("SELECT " + s).expressions)


def _parse_order(s: str) -> exp.Ordered:
    return _parse("SELECT 1 ORDER BY " + s).args["order"].expressions[0]


_ATOMS = (exp.Column, exp.Literal, exp.Paren, exp.Null, exp.Boolean, exp.Func, exp.Subquery, exp.Window)


def _subst(e: exp.Expression, cols: list[exp.Expression]) -> exp.Expression:
    """``e`` with each placeholder `` `#n` `` replaced by ``cols[n]`` (parenthesized when compound)."""

    def swap(node):
        if isinstance(node, exp.Column) and not node.table:
            m = _PLACEHOLDER.match(node.name)
            if m:
                i = int(m.group(1))
                if i >= len(cols):
                    raise NoSql(f"column #{i} is past the input's {len(cols)} columns")
                r = cols[i].copy()
                return r if isinstance(r, _ATOMS) else exp.Paren(this=r)
        return node

    return e.copy().transform(swap, copy=False)


def _by_output_name(order: exp.Expression, cols: list[exp.Expression], names: list[str]) -> exp.Expression:
    """``order`` with each column that the SELECT outputs as is written as that output's name.

    Spark 4.3 refuses ``ORDER BY q.k`` (qualified by the FROM alias) over a CTE that is a UNION ALL
    of aggregates with ``CAST(NULL AS …)`` columns: ``RemoveRedundantAliases`` leaves the plan
    unresolved (PLAN_VALIDATION_FAILED_RULE_IN_BATCH), also without the extension. The output name
    means the same column and is accepted.

    >>> q = exp.column("k", "q")
    >>> _by_output_name(exp.Ordered(this=q.copy()), [q], ["key"]).this.sql()
    'key'
    >>> _by_output_name(exp.Ordered(this=exp.column("v", "q")), [q], ["key"]).this.sql()
    'q.v'
    """
    by_col = {c.sql(): n for c, n in zip(cols, names) if isinstance(c, exp.Column)}

    def swap(node):
        if isinstance(node, exp.Column) and node.sql() in by_col:
            return exp.column(_ident(by_col[node.sql()]))
        return node

    return order.copy().transform(swap, copy=False)


def _no_ordinal(e: exp.Expression) -> exp.Expression:
    """An integer literal in GROUP BY / ORDER BY would be read as an ordinal: cast it."""
    if isinstance(e, exp.Literal) and not e.is_string:
        return exp.cast(e, "INT")
    return e


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name))


def _col(name: str, table: str) -> exp.Column:
    return exp.Column(this=_ident(name), table=exp.to_identifier(table))


def _unique(names: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for i, n in enumerate(names):
        base = n or f"_c{i}"
        cand, k = base, 1
        while cand.lower() in seen:
            k += 1
            cand = f"{base}_{k}"
        seen.add(cand.lower())
        out.append(cand)
    return out


# ---------------------------------------------------------------- terms


@dataclass
class _Term:
    """One select-project-join term being built: FROM, joins, WHERE and the column expressions."""

    from_: exp.Expression
    cols: list[exp.Expression]
    joins: list[exp.Join] = field(default_factory=list)
    laterals: list[exp.Lateral] = field(default_factory=list)
    where: list[exp.Expression] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def select(self, names: Optional[list[str]], cols: Optional[list[exp.Expression]] = None) -> exp.Select:
        cols = self.cols if cols is None else cols
        items = [c.copy() if names is None else exp.alias_(c.copy(), _ident(n)) for c, n in
                 zip(cols, names if names is not None else [None] * len(cols))]
        if not items:
            items = [exp.alias_(exp.Literal.number(1), "_")]
        q = exp.Select(expressions=items).from_(self.from_.copy())
        for j in self.joins:
            q = q.join(j.copy())
        for lat in self.laterals:
            q.append("laterals", lat.copy())
        if self.where:
            q = q.where(exp.and_(*[w.copy() for w in self.where]))
        if self.notes:
            q.add_comments(self.notes)
        return q


class _Writer:
    def __init__(self, program):
        self.program = program
        self.columns: dict[str, list[str]] = {}   # block -> CTE column names (unique)
        self.problems: list[str] = []
        self._n = 0

    def alias(self, prefix: str = "t") -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    # -- leaves

    def source(self, get, names_hint: Optional[list[str]] = None) -> tuple[exp.Expression, list[exp.Expression]]:
        """A FROM item for a Get, aliased, and its columns."""
        a = self.alias()
        if get.source == "block":
            if get.name not in self.columns:
                raise NoSql(f"block {get.name} is read before it is written")
            names = self.columns[get.name]
            table = exp.Table(this=_ident(get.name))
        elif get.source in ("table", "cache"):
            if get.name.startswith("cached(") or names_hint is None:
                raise NoSql(f"{get.source} {get.name} has no name SQL can read")
            names = names_hint
            table = exp.to_table(get.name, dialect=_READ)
        else:
            raise NoSql(f"a {get.source} ({get.name}) has no SQL form")
        return exp.alias_(table, a, table=True), [_col(n, a) for n in names]

    def leaf_term(self, branch) -> _Term:
        leaf, sql = branch.leaf, branch.sql or {}
        kind = sql.get("kind")
        if kind == "unsupported":
            raise NoSql(sql.get("text") or f"{leaf.kind} has no SQL form")
        if leaf.kind == "Get":
            src, cols = self.source(leaf, sql.get("names"))
            return _Term(src, cols)
        if leaf.kind == "Constant":
            if kind != "values":
                raise NoSql(f"constant {leaf.detail} has no SQL form")
            a = self.alias("v")
            q = _parse(sql["text"])
            return _Term(exp.alias_(exp.Subquery(this=q), a, table=True), [_col(n, a) for n in sql.get("names", [])])
        if leaf.kind == "Join":
            if kind != "join":
                raise NoSql("a join without SQL form")
            (lsrc, lcols), (rsrc, rcols) = [self.source(g, None) for g in leaf.inputs]
            cond = [_subst(_parse(c), lcols + rcols) for c in sql.get("exprs", [])]
            jt = (sql.get("text") or "INNER").upper()
            if jt == "EXISTENCE":
                sub = exp.Select(expressions=[exp.Literal.number(1)]).from_(rsrc)
                if cond:
                    sub = sub.where(cond[0])
                return _Term(lsrc, lcols + [exp.Exists(this=sub)])
            words = jt.split()
            side = words[0] if words[0] in ("LEFT", "RIGHT", "FULL") else None
            kinds = [w for w in words if w in ("INNER", "OUTER", "SEMI", "ANTI", "CROSS")]
            jkind = kinds[0] if kinds else None
            if jkind == "OUTER":
                jkind = "OUTER"
            join = exp.Join(this=rsrc, side=side, kind=jkind if not (jkind == "INNER" and not cond) else "CROSS")
            if cond:
                join.set("on", cond[0])
            cols = lcols if jkind in ("SEMI", "ANTI") else lcols + rcols
            return _Term(lsrc, cols, joins=[join])
        raise NoSql(f"{leaf.kind} {getattr(leaf, 'node', '')} has no SQL form".strip())

    def unary(self, t: _Term, u) -> None:
        sql = u.sql
        if sql is None:
            raise NoSql(f"{u.op}({', '.join(u.args)}) has no SQL form (from an older normalizer?)")
        kind = sql["kind"]
        if kind == "map":
            t.cols = t.cols + [_subst(_parse(e), t.cols) for e in sql["exprs"]]
        elif kind == "filter":
            t.where += [_subst(_parse(e), t.cols) for e in sql["exprs"]]
        elif kind == "project":
            t.cols = [t.cols[i] for i in sql["positions"]]
        elif kind == "expand":
            a = self.alias("e")
            projections = [[_subst(x, t.cols) for x in _parse_list(p)] for p in sql["exprs"]]
            values = exp.values([(i,) for i in range(len(projections))], alias=a, columns=["_k"])
            t.joins.append(exp.Join(this=values, kind="CROSS"))
            k = _col("_k", a)
            t.cols = [exp.Case(this=k.copy(), ifs=[exp.If(this=exp.Literal.number(i), true=proj[j])
                                                  for i, proj in enumerate(projections)])
                      for j in range(len(sql["names"]))]
        elif kind == "generate":
            a = self.alias("g")
            gen = _subst(_parse(sql["exprs"][0]), t.cols)
            lat = exp.Lateral(this=gen, view=True, outer=sql.get("text") == "outer",
                              alias=exp.TableAlias(this=exp.to_identifier(a),
                                                   columns=[_ident(n) for n in sql["names"]]))
            t.laterals.append(lat)
            t.cols = [t.cols[i] for i in sql.get("positions", [])] + [_col(n, a) for n in sql["names"]]
        elif kind == "local_limit":
            t.notes.append(f"a local limit {sql.get('text')} (pushed below a limit) is left out: any rows may be kept")
        elif kind == "unsupported":
            raise NoSql(sql.get("text") or u.op)
        else:
            raise NoSql(f"unknown SQL form {kind!r} of {u.op}")

    def branch_term(self, branch) -> _Term:
        t = self.leaf_term(branch)
        for u in branch.unary:
            self.unary(t, u)
        return t

    # -- bodies and heads

    @staticmethod
    def _setop(parts: list[exp.Expression], op) -> exp.Expression:
        out = parts[0]
        for p in parts[1:]:
            out = op(out, p, distinct=False)
        return out

    def body(self, block, names: list[str]) -> exp.Expression:
        """UNION ALL of the positive terms, EXCEPT ALL each negated one (INTERSECT ALL for Threshold intersect)."""
        terms = [(b.negate, self.branch_term(b)) for b in block.branches]
        pos = [t.select(names) for neg, t in terms if not neg]
        neg = [t.select(names) for neg, t in terms if neg]
        if not pos:
            empty = terms[0][1].select(names).where(exp.false())
            pos = [empty]
        body = self._setop(pos, exp.union)
        head = block.head
        if neg and head is not None and head.kind == "Threshold" and head.mode == "intersect":
            left = exp.Subquery(this=body) if len(pos) > 1 else body
            right = self._setop(neg, exp.union)
            right = exp.Subquery(this=right) if len(neg) > 1 else right
            return exp.intersect(left, right, distinct=False)
        for n in neg:
            body = exp.except_(body, n, distinct=False)
        return body

    def single_term(self, block) -> _Term:
        """The body as one term: the branch itself, or the UNION ALL as a derived table."""
        if len(block.branches) == 1 and not block.branches[0].negate:
            return self.branch_term(block.branches[0])
        inner = self.body_of_branches(block)
        a = self.alias("b")
        n = len(inner[1])
        return _Term(exp.alias_(exp.Subquery(this=inner[0]), a, table=True), [_col(f"_c{i}", a) for i in range(n)])

    def body_of_branches(self, block) -> tuple[exp.Expression, list[str]]:
        width = len(self.branch_term(block.branches[0]).cols)
        names = [f"_c{i}" for i in range(width)]
        plain = replace(block, head=None, columns=names)
        return self.body(plain, names), names

    def block_query(self, block) -> exp.Expression:
        names = self.columns[block.name]
        head = block.head
        if head is None or head.kind in ("ArrangeBy", "Threshold"):
            return self.body(block, names)
        sql = head.sql
        if sql is None:
            raise NoSql(f"the {head.kind} head has no SQL form (from an older normalizer?)")
        kind = sql["kind"]
        if kind == "unsupported":
            raise NoSql(sql.get("text") or f"the {head.kind} head has no SQL form")
        t = self.single_term(block)
        if kind == "aggregate":
            out = [_subst(_parse(e), t.cols) for e in sql["exprs"]]
            q = t.select(names, out)
            group = [_no_ordinal(_subst(_parse(g), t.cols)) for g in sql["keys"]]
            return q.group_by(*group) if group else q
        if kind == "window":
            wins = [_subst(_parse(e), t.cols) for e in sql["exprs"]]
            return t.select(names, t.cols + wins)
        if kind == "rank":
            keys = ", ".join(sql["keys"])
            order = ", ".join(sql["order"])
            over = f"{sql['text']} OVER ({'PARTITION BY ' + keys + ' ' if keys else ''}ORDER BY {order})"
            rank = _subst(_parse(over), t.cols)
            inner_names = [f"_c{i}" for i in range(len(t.cols))] + ["_rank"]
            inner = t.select(inner_names, t.cols + [rank])
            a = self.alias("r")
            outer = exp.Select(expressions=[exp.alias_(_col(f"_c{i}", a), _ident(n)) for i, n in enumerate(names)])
            return outer.from_(exp.alias_(exp.Subquery(this=inner), a, table=True)).where(
                exp.LTE(this=_col("_rank", a), expression=exp.Literal.number(head.limit)))
        if kind == "sort_limit":
            q = t.select(names)
            orders = [_subst(_parse_order(o), t.cols) for o in sql["order"]]
            if orders:
                q = q.order_by(*[o if not isinstance(o, exp.Ordered) else o for o in orders])
            if head.limit is not None:
                q = q.limit(head.limit)
            if head.offset:
                q = q.offset(head.offset)
            return q
        raise NoSql(f"unknown SQL form {kind!r} of {head.kind}")

    def failing(self, block, why: str) -> exp.Expression:
        names = self.columns[block.name]
        msg = f"ArrNF: block {block.name} cannot be written in SQL: {why}"
        items = [exp.alias_(exp.Anonymous(this="raise_error", expressions=[exp.Literal.string(msg)]), _ident(names[0]))
                 if i == 0 else exp.alias_(exp.Null(), _ident(n)) for i, n in enumerate(names)] or [
            exp.alias_(exp.Anonymous(this="raise_error", expressions=[exp.Literal.string(msg)]), "_")]
        q = exp.Select(expressions=items)
        q.add_comments([f" ArrNF: NOT EXPRESSIBLE IN SQL: block {block.name}: {why}; this CTE fails when run "])
        return q

    # -- the statement

    def statement(self) -> exp.Expression:
        ctes = []
        for block in self.program.blocks:
            self.columns[block.name] = _unique(list(block.columns))
            try:
                q = self.block_query(block)
            except NoSql as e:
                self.problems.append(f"{block.name}: {e}")
                q = self.failing(block, str(e))
            ctes.append(exp.CTE(this=q, alias=exp.TableAlias(this=_ident(block.name))))
        root = self.program.blocks[-1]
        a = self.alias("q")
        cols: list[exp.Expression] = [_col(n, a) for n in self.columns[root.name]]
        names = list(root.columns)
        orders: list[exp.Expression] = []
        limit = offset = None
        for u in self.program.finishing:
            s = u.sql or {}
            kind = s.get("kind")
            try:
                if kind == "sort":
                    orders = [_subst(_parse_order(o), cols) for o in s["exprs"]]
                    orders = [o.set("this", _no_ordinal(o.this)) or o for o in orders]
                elif kind == "select":
                    cols = [_subst(_parse(e), cols) for e in s["exprs"]]
                    names = list(s["names"])
                elif kind == "limit":
                    limit = s["text"]
                elif kind == "offset":
                    offset = s["text"]
                else:
                    raise NoSql(f"finishing {u.op}({', '.join(u.args)}) has no SQL form")
            except NoSql as e:
                self.problems.append(f"finishing: {e}")
                cols = [exp.Anonymous(this="raise_error", expressions=[exp.Literal.string(
                    f"ArrNF: the finishing {u.op} cannot be written in SQL: {e}")])]
                names = ["_"]
        final = exp.Select(expressions=[exp.alias_(c, _ident(n)) for c, n in zip(cols, names)]).from_(
            exp.alias_(exp.Table(this=_ident(root.name)), a, table=True))
        if orders:
            final = final.order_by(*[_by_output_name(o, cols, names) for o in orders])
        if limit is not None:
            final = final.limit(_parse(limit))
        if offset is not None:
            final = final.offset(_parse(offset))
        final.set("with_" if "with_" in exp.Select.arg_types else "with", exp.With(expressions=ctes))
        return final


def sql_problems(program) -> list[str]:
    """The blocks (and finishing operators) of ``program`` that have no SQL form, and why."""
    w = _Writer(program)
    w.statement()
    return w.problems


def to_sql(program, dialect: str = "spark", pretty: bool = True) -> str:
    """``program`` as one SQL statement: Spark SQL, or ``duckdb`` / ``postgres`` as best effort.

    Warns :class:`ArrnfSqlWarning` when some block has no SQL form (its CTE then says so in a comment
    and fails when run).
    """
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}, not {dialect!r}")
    w = _Writer(program)
    tree = w.statement()
    head = [f"-- ArrNF program {program.name}: {len(program.blocks)} blocks, one CTE each (dependency order)"]
    if dialect != "spark":
        head.append(f"-- {dialect}: BEST EFFORT translation by sqlglot from Spark SQL; not checked by running it")
    if w.problems:
        head.append(f"-- NOT EXPRESSIBLE IN SQL ({len(w.problems)}): the CTEs marked below fail when run")
        head += [f"--   {p}" for p in w.problems]
        warnings.warn(f"ArrNF program {program.name}: {len(w.problems)} part(s) cannot be written in SQL: "
                      + "; ".join(w.problems), ArrnfSqlWarning, stacklevel=2)
    return "\n".join(head) + "\n" + tree.sql(dialect=dialect, pretty=pretty) + "\n"
