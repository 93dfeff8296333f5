// Helpers the benchmark scripts share: the median of a sample, and waiting for a started server's "listening" line.

/** The median (the mean of the two middle values for an even count); 0 for no values. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Resolves with the parsed JSON log line of a `switchboard serve --json` child once it says it is listening. */
export function listening(child) {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (data) => {
      buffered += data;
      for (const line of buffered.split('\n')) if (line.includes('"event":"listening"')) resolve(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`a benchmark process exited with ${code}`)));
  });
}
