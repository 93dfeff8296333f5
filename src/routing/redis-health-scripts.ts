/**
 * Lua scripts that write a node's ejections and recoveries to Redis (redis-health-store.ts), each as one atomic step,
 * so that whatever order the nodes' exchanges arrive in, a recovery clears only the ejection it recovered from.
 *
 * Keys: the deployment's shared ejection ("count:until"), the ejection it last recovered from (same form, kept as long
 * as that ejection's shared state would have been), then, for a recovery, its outcome buckets.
 */

/**
 * ARGV: the ejection, its lifetime (ms). An ejection already recovered from arrives only when sent again (a node whose
 * exchange failed after Redis had run it): it is not taken back in.
 */
export const ejectScript = `
if redis.call('GET', KEYS[2]) == ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/**
 * ARGV: the ejection recovered from, how long to remember it (ms; 0 or less: not at all). Another node may have
 * ejected the deployment again meanwhile: that newer ejection stays, and so do the outcomes that are its evidence.
 */
export const recoverScript = `
local stored = redis.call('GET', KEYS[1])
local remember = tonumber(ARGV[2])
if remember > 0 then redis.call('SET', KEYS[2], ARGV[1], 'PX', remember) end
if stored and stored ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
for index = 3, #KEYS do redis.call('DEL', KEYS[index]) end
return 1
`;
