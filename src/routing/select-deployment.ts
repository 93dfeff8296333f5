/**
 * Weighted random choice. Deployments with weight 0 are standbys: chosen only when no weighted one is a candidate.
 * `random` is injected so tests can make the choice deterministic.
 */
export function pickWeighted<Candidate extends { weight: number }>(
  candidates: readonly Candidate[],
  random: () => number,
): Candidate | undefined {
  // One candidate (the usual case): nothing to weigh.
  if (candidates.length === 1) return candidates[0];
  const weighted = candidates.filter((candidate) => candidate.weight > 0);
  if (weighted.length === 0) return candidates[Math.floor(random() * candidates.length)];
  const total = weighted.reduce((sum, candidate) => sum + candidate.weight, 0);
  let point = random() * total;
  for (const candidate of weighted) {
    point -= candidate.weight;
    if (point < 0) return candidate;
  }
  return weighted.at(-1);
}
