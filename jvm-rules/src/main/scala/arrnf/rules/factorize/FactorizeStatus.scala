package arrnf.rules.factorize

import arrnf.rules.RuleLog

/**
 * What [[arrnf.rules.FactorizeUnionOfJoins]] did, readable from Python through py4j:
 * `spark._jvm.arrnf.Api.factorizeFirings()` and `.factorizeReasons()`.
 */
object FactorizeStatus extends RuleLog
