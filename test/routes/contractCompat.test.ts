// Issue 26: the contract test again with compat=iyk, so the OpenAPI document is held to what the
// gateway sends in both modes (decimal uids, poapEvents, the hosted error shape).
process.env.CONTRACT_COMPAT = 'iyk'
await import('./contract.test.js')
