// Measures the built-in local model (SmolLM2-135M-Instruct, Q4_1) on this machine: time to first token and tokens per
// second for 1 and for 4 concurrent streams, once directly through node-llama-cpp (the same settings the local
// provider uses: its default threads, context and slots, the GGUF's chat template, greedy decoding) and once through
// the gateway (a real `switchboard serve` with a key, streaming SSE, request log on). Rounds alternate direct and
// gateway so both see the same machine state. Results go to docs/benchmarks.md between the local-model markers.
//
// Usage: npm run bench:local [-- --rounds N --max-tokens N]   (needs the model: npx switchboard models fetch)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './process-tools.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argument = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const rounds = argument('rounds', 3);
const maxTokens = argument('max-tokens', 128);
const concurrencies = [1, 4];
const { defaultModel, defaultModelPath } = await import(path.join(root, 'dist/providers/local/default-model.js'));
const modelPath = process.env.SWITCHBOARD_BENCH_MODEL ?? defaultModelPath(path.join(root, 'data'));
const log = (message) => process.stderr.write(`[bench:local] ${message}\n`);
const work = mkdtempSync(path.join(tmpdir(), 'switchboard-bench-local-'));
const children = [];
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

if (!existsSync(modelPath)) {
  log(`${modelPath} is missing: run npx switchboard models fetch --data-dir data`);
  process.exit(1);
}

// Distinct openings per request, so no run reuses another's prompt state beyond the template's shared system prefix.
const topics = ['a dragon', 'the sea', 'a robot', 'a city at night', 'a forest', 'the moon', 'a train', 'a lighthouse'];
let promptCounter = 0;
const nextPrompt = () => {
  promptCounter++;
  return `Story ${promptCounter}: write a long, detailed story about ${topics[promptCounter % topics.length]}.`;
};
const longPrompt = `Summarize the following notes in one sentence.\n${'The gateway routes requests to providers, logs every call, and enforces limits per key. '.repeat(24)}`;

/** One stream's figures: time to first token, completion tokens, generation rate after the first token. */
function figures(startedAt, firstAt, endedAt, tokens, promptTokens) {
  return {
    ttftMs: firstAt - startedAt,
    tokens,
    promptTokens,
    tokensPerSecond: tokens > 1 ? ((tokens - 1) * 1000) / (endedAt - firstAt) : 0,
    endedAt,
  };
}

// --- direct: node-llama-cpp in this process, configured as the local provider configures it -----------------------
async function startDirect() {
  const library = await import('node-llama-cpp');
  const llama = await library.getLlama({ build: 'never', gpu: 'auto', logLevel: library.LlamaLogLevel.warn });
  const model = await llama.loadModel({ modelPath });
  const threads = Math.max(1, llama.cpuMathCores - 1);
  const context = await model.createContext({
    contextSize: Math.min(model.trainContextSize, 4096),
    sequences: 4,
    threads,
    failedCreationRemedy: false,
  });
  const wrapper = new library.JinjaTemplateChatWrapper({
    template: model.fileInfo.metadata.tokenizer.chat_template,
    tokenizer: model.tokenizer,
  });
  const chats = Array.from(
    { length: 4 },
    () => new library.LlamaChat({ contextSequence: context.getSequence(), chatWrapper: wrapper }),
  );
  async function run(chat, prompt, limit) {
    const meter = chat.sequence.tokenMeter.getState();
    const startedAt = performance.now();
    let firstAt;
    await chat.generateResponse(
      [
        { type: 'user', text: prompt },
        { type: 'model', response: [] },
      ],
      {
        maxTokens: limit,
        temperature: 0,
        repeatPenalty: false,
        onResponseChunk: (chunk) => {
          if (chunk.text) firstAt ??= performance.now();
        },
      },
    );
    const endedAt = performance.now();
    return figures(startedAt, firstAt ?? endedAt, endedAt, chat.sequence.tokenMeter.diff(meter).usedOutputTokens);
  }
  return {
    threads,
    gpu: llama.gpu || 'cpu',
    stream: (index, prompt, limit) => run(chats[index], prompt, limit),
    close: async () => {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}

// --- gateway: a real server process, streaming over HTTP with a real key -------------------------------------------
async function startGateway() {
  const config = path.join(work, 'switchboard.yaml');
  writeFileSync(
    config,
    [
      'server:',
      '  host: 127.0.0.1',
      '  port: 0',
      `  data_dir: ${path.join(work, 'data')}`,
      'logging:',
      '  level: warn',
      'providers:',
      '  - name: local',
      '    type: local',
      `    model_path: ${modelPath}`,
      'models:',
      `  - name: ${defaultModel.name}`,
      '    provider: local',
      '',
    ].join('\n'),
  );
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin/switchboard.js'), 'serve', '--config', config, '--json'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  const events = await new Promise((resolve, reject) => {
    let output = '';
    const found = {};
    child.stdout.on('data', (chunk) => {
      output += chunk;
      for (const line of output.split('\n')) {
        // Output that is not a terminal gets the key in a file (0600) named by the event, never the key itself.
        if (line.includes('"event":"first_run"')) found.key = readFileSync(JSON.parse(line).keyFile, 'utf8').trim();
        if (line.includes('"event":"listening"')) found.url = JSON.parse(line).url;
      }
      if (found.key && found.url) resolve(found);
    });
    child.on('exit', (code) => reject(new Error(`the gateway exited with ${code}`)));
  });
  async function stream(_index, prompt, limit) {
    const startedAt = performance.now();
    const response = await fetch(`${events.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${events.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: defaultModel.name,
        messages: [{ role: 'user', content: prompt }],
        max_tokens: limit,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    let firstAt;
    let tokens = 0;
    let promptTokens = 0;
    let buffered = '';
    const decoder = new TextDecoder();
    for await (const bytes of response.body) {
      buffered += decoder.decode(bytes, { stream: true });
      let end = buffered.indexOf('\n\n');
      while (end !== -1) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        end = buffered.indexOf('\n\n');
        if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
        const chunk = JSON.parse(event.slice(6));
        if (chunk.choices[0]?.delta?.content) firstAt ??= performance.now();
        if (chunk.usage) {
          tokens = chunk.usage.completion_tokens;
          promptTokens = chunk.usage.prompt_tokens;
        }
      }
    }
    const endedAt = performance.now();
    return figures(startedAt, firstAt ?? endedAt, endedAt, tokens, promptTokens);
  }
  const rss = () => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    } catch {
      return 0;
    }
  };
  return { stream, rss, close: async () => child.kill('SIGTERM') };
}

async function measure(target, concurrency) {
  const prompts = Array.from({ length: concurrency }, nextPrompt);
  const startedAt = performance.now();
  const streams = await Promise.all(prompts.map((prompt, index) => target.stream(index, prompt, maxTokens)));
  const wall = Math.max(...streams.map((stream) => stream.endedAt)) - startedAt;
  const total = streams.reduce((sum, stream) => sum + stream.tokens, 0);
  return {
    ttftMs: median(streams.map((stream) => stream.ttftMs)),
    perStream: median(streams.map((stream) => stream.tokensPerSecond)),
    aggregate: (total * 1000) / wall,
    tokens: total,
  };
}

async function promptProcessing(target) {
  return target.stream(0, `${nextPrompt()}\n${longPrompt}`, 1);
}

async function main() {
  log(`model ${modelPath}; ${rounds} rounds; ${maxTokens} tokens per stream; streams: ${concurrencies.join(', ')}`);
  const loadBefore = loadavg()[0];
  const direct = await startDirect();
  const gateway = await startGateway();
  // Warm-up: first evaluations allocate buffers; not measured.
  await direct.stream(0, nextPrompt(), 8);
  await gateway.stream(0, nextPrompt(), 8);
  const results = { direct: {}, gateway: {} };
  for (const concurrency of concurrencies) {
    results.direct[concurrency] = [];
    results.gateway[concurrency] = [];
  }
  results.direct.pp = [];
  results.gateway.pp = [];
  for (let round = 1; round <= rounds; round++) {
    for (const concurrency of concurrencies) {
      for (const [name, target] of [
        ['direct', direct],
        ['gateway', gateway],
      ]) {
        const result = await measure(target, concurrency);
        results[name][concurrency].push(result);
        log(
          `round ${round} ${name} x${concurrency}: ttft ${result.ttftMs.toFixed(0)} ms, ${result.perStream.toFixed(1)} tok/s per stream, ${result.aggregate.toFixed(1)} tok/s total`,
        );
      }
    }
    for (const [name, target] of [
      ['direct', direct],
      ['gateway', gateway],
    ]) {
      const result = await promptProcessing(target);
      results[name].pp.push(result.ttftMs);
      if (result.promptTokens) results.longPromptTokens = result.promptTokens;
    }
  }
  const rss = gateway.rss();
  await gateway.close();
  await direct.close();

  // Prompt tokens of the long prompt, for the prompt-processing rate (counted by the gateway's own usage).
  const summarize = (runs) => ({
    ttftMs: median(runs.map((run) => run.ttftMs)),
    perStream: median(runs.map((run) => run.perStream)),
    aggregate: median(runs.map((run) => run.aggregate)),
  });
  const summary = {
    rounds,
    maxTokens,
    threads: direct.threads,
    gpu: direct.gpu,
    rssMb: Math.round(rss),
    loadAverage: [loadBefore, loadavg()[0]].map((value) => Number(value.toFixed(1))),
  };
  for (const concurrency of concurrencies) {
    summary[`direct${concurrency}`] = summarize(results.direct[concurrency]);
    summary[`gateway${concurrency}`] = summarize(results.gateway[concurrency]);
  }
  summary.longPromptTtftMs = { direct: median(results.direct.pp), gateway: median(results.gateway.pp) };
  summary.longPromptTokens = results.longPromptTokens;

  const row = (label, direct, gateway, unit, digits = 0) =>
    `| ${label} | ${direct.toFixed(digits)} ${unit} | ${gateway.toFixed(digits)} ${unit} | ${(gateway - direct >= 0 ? '+' : '') + (gateway - direct).toFixed(digits)} ${unit} |`;
  const lines = [];
  for (const concurrency of concurrencies) {
    const d = summary[`direct${concurrency}`];
    const g = summary[`gateway${concurrency}`];
    const streams = concurrency === 1 ? '1 stream' : `${concurrency} concurrent streams`;
    lines.push(row(`Time to first token, ${streams}`, d.ttftMs, g.ttftMs, 'ms'));
    lines.push(row(`Generation per stream, ${streams}`, d.perStream, g.perStream, 'tok/s', 1));
    lines.push(row(`Generation in total, ${streams}`, d.aggregate, g.aggregate, 'tok/s', 1));
  }
  const promptRate = (milliseconds) => (summary.longPromptTokens * 1000) / milliseconds;
  lines.push(
    row(
      `Time to first token, ${summary.longPromptTokens}-token prompt`,
      summary.longPromptTtftMs.direct,
      summary.longPromptTtftMs.gateway,
      'ms',
    ),
    row(
      'Prompt processing (that prompt ÷ its time to first token)',
      promptRate(summary.longPromptTtftMs.direct),
      promptRate(summary.longPromptTtftMs.gateway),
      'tok/s',
      1,
    ),
  );
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const section = `<!-- BEGIN local-model -->
## Built-in local model (\`npm run bench:local\`)

Measured on ${new Date().toISOString().slice(0, 10)}, on this machine: ${cpus().length} × ${cpu}, Node ${process.version},
${defaultModel.name} (${defaultModel.fileName}), node-llama-cpp on the ${summary.gpu === 'cpu' ? 'CPU' : summary.gpu},
${summary.threads} llama.cpp thread${summary.threads === 1 ? '' : 's'} (the provider's default: all cores but one), 4 slots of 4096 tokens.
Each stream asks for a story with greedy decoding and \`max_tokens: ${maxTokens}\`; medians of ${rounds} rounds, direct and
gateway alternating. **Direct** runs node-llama-cpp in the benchmark process with the provider's settings;
**gateway** is \`switchboard serve\` with a real key, the request log on, streaming SSE over HTTP. Time to first
token includes reading the prompt (the template's system prompt plus the question, about 40 tokens, or the long
prompt). "Per stream" is each stream's rate after its first token; "in total" is all streams' tokens over the
wall time.

| Measure | Direct (node-llama-cpp) | Through the gateway | Gateway − direct |
|---|---|---|---|
${lines.join('\n')}

With ${summary.threads === 1 ? 'one llama.cpp thread' : `${summary.threads} llama.cpp threads`} the CPU is the limit: concurrent streams are evaluated
together, one batch per step, and share about the same total rate a single stream gets. Gateway RSS with the model
loaded (4 slots × 4096 tokens of KV cache), after the runs: ${summary.rssMb} MB. The machine is shared and noisy
(1-minute load average ${summary.loadAverage[0]} before the runs, ${summary.loadAverage[1]} after, on ${cpus().length} cores):
compare the two columns of one run, not numbers across days.
<!-- END local-model -->`;
  const file = path.join(root, 'docs', 'benchmarks.md');
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const begin = current.indexOf('<!-- BEGIN local-model -->');
  const end = current.indexOf('<!-- END local-model -->');
  const updated =
    begin !== -1 && end > begin
      ? `${current.slice(0, begin)}${section}${current.slice(end + '<!-- END local-model -->'.length)}`
      : `${current.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, updated);
  // The repository's formatter aligns the table, so `npm test` (which lints docs too) stays green after a run.
  spawnSync(path.join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', file], { stdio: 'ignore' });
  log('wrote the local-model section of docs/benchmarks.md');
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

main()
  .then(() => process.exit(0))
  .catch((error) => {
    log(error.stack ?? String(error));
    process.exit(1);
  });
