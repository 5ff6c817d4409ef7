#!/usr/bin/env node
// Measures the test server's (llama_server.mjs) peak RSS and wall time per
// step of a context x concurrency sweep, for tests/probe/README.md:
//
//   node tests/probe/measure_sweep.mjs URL PID [--contexts 256,1024,4096]
//        [--concurrency 1,2,4] [--max-tokens 16] [--cgroup]
//
// Each step resets the server's peak RSS (writing 5 to /proc/PID/clear_refs),
// sends CONCURRENCY streamed completions at once whose prompt is CONTEXT -
// max_tokens token ids (so each request's context is CONTEXT tokens), waits
// for all, then reads VmHWM. Prints one JSON line per step.
import fs from "node:fs";

const argv = process.argv.slice(2);
if (argv.length < 2) {
  process.stderr.write("usage: node measure_sweep.mjs URL PID [--contexts L] [--concurrency L] [--max-tokens N]\n");
  process.exit(2);
}
const [url, pid] = argv;
let contexts = [256, 1024, 4096];
let conc = [1, 2, 4];
let maxTokens = 16;
for (let i = 2; i < argv.length; i += 2) {
  const list = (v) => v.split(",").map(Number);
  if (argv[i] === "--contexts") contexts = list(argv[i + 1]);
  else if (argv[i] === "--concurrency") conc = list(argv[i + 1]);
  else if (argv[i] === "--max-tokens") maxTokens = Number(argv[i + 1]);
  else if (argv[i] === "--cgroup") i--; // a flag: read the server's own cgroup's peak too
  else {
    process.stderr.write(`unknown option ${argv[i]}\n`);
    process.exit(2);
  }
}

const status = (key) => {
  const m = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${key}:\\s+(\\d+) kB`));
  return m ? Number(m[1]) * 1024 : null;
};
// the server's own CPU seconds (utime + stime; clock ticks of 1/100 s)
let lastCpu = 0;
const cpu = () => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    lastCpu = (Number(f[11]) + Number(f[12])) / 100;
  } catch {} // the server is gone: its last reading
  return lastCpu;
};
const mib = (b) => b == null ? null : Math.round((b / 1048576) * 10) / 10;

async function one(ctx) {
  try {
    return await oneRequest(ctx);
  } catch (e) {
    return { status: `error: ${e.cause?.code ?? e.message}` };
  }
}
async function oneRequest(ctx) {
  // token ids of the tiny model's byte range; the server adds no BOS to ids
  const prompt = Array.from({ length: ctx - maxTokens }, (_, i) => 3 + ((i * 7919) % 256));
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt, max_tokens: maxTokens, ignore_eos: true, stream: true }),
  });
  let ttft = null;
  let events = 0;
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of res.body) {
    buf += dec.decode(chunk, { stream: true });
    let k;
    while ((k = buf.indexOf("\n\n")) >= 0) {
      const ev = buf.slice(0, k);
      buf = buf.slice(k + 2);
      if (!ev.startsWith("data: ") || ev === "data: [DONE]") continue;
      const j = JSON.parse(ev.slice(6));
      if (j.choices?.[0]?.finish_reason == null && j.choices?.length) {
        if (ttft == null) ttft = performance.now() - t0;
        events++;
      }
    }
  }
  return { status: res.status, ttft_ms: Math.round(ttft ?? -1), events, ms: Math.round(performance.now() - t0) };
}

// The server's memory cgroup (v1: memory.max_usage_in_bytes, reset by
// writing 0; v2: memory.peak, reset where the kernel allows), or null.
function cgroupPeakFile() {
  for (const line of fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n")) {
    const [, ctrl, p] = line.split(":");
    if (ctrl === "memory" && fs.existsSync(`/sys/fs/cgroup/memory${p}/memory.max_usage_in_bytes`))
      return `/sys/fs/cgroup/memory${p}/memory.max_usage_in_bytes`;
    if (ctrl === "" && p !== "/" && fs.existsSync(`/sys/fs/cgroup${p}/memory.peak`)) return `/sys/fs/cgroup${p}/memory.peak`;
  }
  return null;
}
const peakFile = argv.includes("--cgroup") ? cgroupPeakFile() : null;
const cgroupPeak = () => {
  try {
    return Number(fs.readFileSync(peakFile, "utf8").trim());
  } catch {
    return null;
  }
};
const resetCgroupPeak = () => {
  try {
    fs.writeFileSync(peakFile, "0");
  } catch {}
};
const base = status("VmRSS");
process.stdout.write(JSON.stringify({ idle_rss_mib: mib(base) }) + "\n");
for (const c of contexts) {
  for (const n of conc) {
    if (!fs.existsSync(`/proc/${pid}`)) {
      process.stdout.write(JSON.stringify({ context: c, concurrency: n, server: "gone" }) + "\n");
      process.exit(1);
    }
    fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
    if (peakFile) resetCgroupPeak();
    const t0 = performance.now();
    const c0 = cpu();
    const rs = await Promise.all(Array.from({ length: n }, () => one(c)));
    const ms = Math.round(performance.now() - t0);
    process.stdout.write(JSON.stringify({ context: c, concurrency: n, peak_rss_mib: fs.existsSync(`/proc/${pid}`) ? mib(status("VmHWM")) : null, cgroup_peak_mib: peakFile ? mib(cgroupPeak()) : null, step_ms: ms, cpu_s: Math.round((cpu() - c0) * 100) / 100, ttft_ms: rs.map((r) => r.ttft_ms), events: rs.map((r) => r.events), status: rs.map((r) => r.status) }) + "\n");
  }
}
