#!/usr/bin/env node
// Measures what the real llama.cpp (as shipped in npm by node-llama-cpp)
// allocates for a model and a context, and what node-llama-cpp itself
// estimates beforehand, and prints ONE JSON object on stdout.
//
//   node tests/llamacpp/measure.mjs MODEL.gguf '{"contextSize":4096,"sequences":1,
//       "batchSize":512,"flashAttention":false,"kvCacheKeyType":"f16",
//       "kvCacheValueType":"f16","gpuLayers":0}' [--modules DIR] [--timeout S] [--log FILE]
//
// Batch mode measures many loads in one process (importing node-llama-cpp and
// getLlama() are most of a single run's time; they are done once) and prints
// one JSON object per job, one per line, in the jobs' order:
//
//   node tests/llamacpp/measure.mjs --batch JOBS.json [--modules DIR] [--timeout S]
//
// JOBS.json is an array of {"model": PATH, "settings": {...}, "log": FILE}
// (settings and log optional). Each job's line is the object the single mode
// prints for that model and those settings, the error object included: a job
// that fails does not stop the others. Each job's log file holds what the
// single mode's --log FILE holds: the lines logged while getLlama() ran (once,
// shared by every job), then the job's own lines, cut from the shared log
// after its context and model are disposed and the queue has drained.
//
// node-llama-cpp is found under --modules DIR (a node_modules folder), else
// under each folder of NODE_PATH (ESM imports ignore NODE_PATH, so it is
// resolved here by hand), else by the ordinary import resolution.
//
// Settings (all optional): contextSize (default 4096), sequences (1),
// batchSize (node-llama-cpp's default: min(contextSize*sequences, 512)),
// flashAttention (true, false or "auto"; default: node-llama-cpp's own default,
// "auto", which llama.cpp resolves to enabled on the CPU), kvCacheKeyType / kvCacheValueType
// ("f16", "q8_0", "q4_0", ...; default f16), gpuLayers (0), useMmap (true),
// evaluate (false; true evaluates a short prompt after creating the context,
// which proves the model runs), threads.
//
// The engine's numbers come from llama.cpp's own log lines (info and debug
// level), in MiB exactly as printed (2 decimals; compute buffers also with 4
// decimals from the debug line printed when the context is freed), plus the
// exact bytes of KV + compute that llama_context::memory_breakdown() reports.
// Exit status: 0 with the JSON; 1 when loading or context creation failed
// (a JSON object with "error" is still printed); 2 for bad arguments; 3 on
// timeout. Batch mode: 0 when every job was measured; 1 when any job failed
// (bad settings included; its line has "error"); 2 for bad arguments or a bad
// jobs file (one error object); 3 when a job ran past --timeout S, which
// counts per job (its line says so, and each later job's line says it was
// not run).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const USAGE = "usage: node measure.mjs MODEL.gguf [SETTINGS_JSON] [--modules DIR] [--timeout S] [--log FILE]\n" +
  "       node measure.mjs --batch JOBS.json [--modules DIR] [--timeout S]";

function fail(code, message, extra = {}) {
  process.stdout.write(JSON.stringify({ error: message, ...extra }) + "\n");
  process.stderr.write(`measure.mjs: ${message}\n`);
  process.exit(code);
}

// A failure of one measurement: the single mode exits with it, the batch
// mode prints it as that job's line and goes on.
class JobError extends Error {
  constructor(code, message, extra = {}) {
    super(message);
    this.code = code;
    this.extra = extra;
  }
}

// ---- arguments --------------------------------------------------------------
const positional = [];
let modulesDir = null;
let timeoutS = 60;
let logFile = null;
let batchFile = null;
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--modules") modulesDir = argv[++i];
    else if (a === "--timeout") timeoutS = Number(argv[++i]);
    else if (a === "--log") logFile = argv[++i];
    else if (a === "--batch") batchFile = argv[++i];
    else if (a === "--help" || a === "-h") {
      process.stdout.write(USAGE + "\n");
      process.exit(0);
    } else positional.push(a);
  }
}
if (batchFile != null) {
  if (positional.length > 0 || logFile != null) fail(2, "--batch takes neither a model, settings nor --log (they are in the jobs file)");
} else if (positional.length < 1 || positional.length > 2) fail(2, USAGE);
if (!Number.isFinite(timeoutS) || timeoutS <= 0) fail(2, "--timeout needs a positive number of seconds");

// ---- logs -----------------------------------------------------------------------
const logLines = []; // {phase, level, text}
let phase = "init"; // when a line arrived (for --log only; see the parser)
function onLog(level, message) {
  for (const text of String(message).split("\n")) if (text.trim() !== "") logLines.push({ phase, level, text });
}
const tail = (lines) => lines.slice(-20).map((l) => l.text);
function writeLog(file, lines) {
  fs.writeFileSync(file, lines.map((l) => `[${l.phase}][${l.level}] ${l.text}`).join("\n") + "\n");
}
// llama.cpp's log lines reach the logger asynchronously (a queue drained on
// the main thread): after a dispose, let the queue drain.
const drain = () => new Promise((r) => setTimeout(r, 250));

// ---- locate node-llama-cpp ----------------------------------------------------
function findPackageDir() {
  const candidates = [];
  if (modulesDir) candidates.push(path.resolve(modulesDir));
  else if (process.env.NODE_PATH)
    for (const p of process.env.NODE_PATH.split(path.delimiter)) if (p) candidates.push(path.resolve(p));
  for (const dir of candidates) {
    const pkg = path.join(dir, "node-llama-cpp");
    if (fs.existsSync(path.join(pkg, "package.json"))) return pkg;
    // DIR may also be the package itself or a folder holding node_modules
    if (path.basename(dir) === "node-llama-cpp" && fs.existsSync(path.join(dir, "package.json"))) return dir;
    const nested = path.join(dir, "node_modules", "node-llama-cpp");
    if (fs.existsSync(path.join(nested, "package.json"))) return nested;
  }
  if (modulesDir) throw new JobError(1, `node-llama-cpp not found under --modules ${modulesDir}`);
  return null;
}
let pkgDir = null;
let pkgJson = null;
let nlc; // the node-llama-cpp module
let llama;

async function importNodeLlamaCpp() {
  pkgDir = findPackageDir();
  try {
    if (pkgDir) {
      pkgJson = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
      const exp = pkgJson.exports?.["."];
      const entry = (typeof exp === "string" ? exp : exp?.import ?? exp?.default) ?? pkgJson.main ?? "dist/index.js";
      nlc = await import(pathToFileURL(path.join(pkgDir, entry)).href);
    } else {
      nlc = await import("node-llama-cpp");
    }
  } catch (e) {
    throw new JobError(1, `cannot load node-llama-cpp${pkgDir ? " from " + pkgDir : ""} (set NODE_PATH or pass --modules DIR): ${e.message}`);
  }
}

async function startLlama() {
  try {
    llama = await nlc.getLlama({ gpu: false, build: "never", logLevel: nlc.LlamaLogLevel.debug, logger: onLog, progressLogs: false });
  } catch (e) {
    throw new JobError(1, `getLlama failed: ${e.message}`, { versions: versions() });
  }
}

function versions() {
  const out = { node: process.version, node_llama_cpp: pkgJson?.version ?? null, llama_cpp_tag: null, llama_cpp_repo: null, package_dir: pkgDir };
  if (pkgDir) {
    try {
      const info = JSON.parse(fs.readFileSync(path.join(pkgDir, "llama", "llama.cpp.info.json"), "utf8"));
      out.llama_cpp_tag = info.tag ?? null;
      out.llama_cpp_repo = info.llamaCppGithubRepo ?? null;
    } catch {}
  }
  return out;
}

// ---- a job: the model and its settings ----------------------------------------------
// What can be checked before node-llama-cpp is loaded.
function checkJob(model, settings) {
  if (settings == null || typeof settings !== "object" || Array.isArray(settings))
    throw new JobError(2, "settings must be a JSON object");
  const modelPath = path.resolve(model);
  if (!fs.existsSync(modelPath)) throw new JobError(1, `${modelPath}: no such file`);
  return modelPath;
}

// The settings with their defaults (needs node-llama-cpp's GgmlType).
function resolveSettings(settings) {
  const { GgmlType } = nlc;
  function ggmlTypeName(v, key) {
    if (v == null) return undefined;
    if (typeof v === "number") return v;
    const name = String(v).toUpperCase();
    if (GgmlType[name] == null) throw new JobError(2, `${key}: '${v}' is not a ggml type`);
    return name;
  }
  return {
    contextSize: settings.contextSize ?? 4096,
    sequences: settings.sequences ?? 1,
    batchSize: settings.batchSize ?? undefined,
    flashAttention: settings.flashAttention, // undefined: node-llama-cpp's default ("auto")
    gpuLayers: settings.gpuLayers ?? 0,
    useMmap: settings.useMmap ?? true,
    kvKey: ggmlTypeName(settings.kvCacheKeyType, "kvCacheKeyType"),
    kvValue: ggmlTypeName(settings.kvCacheValueType, "kvCacheValueType"),
    threads: settings.threads,
    evaluate: settings.evaluate,
  };
}

// Loads the model, creates the context, disposes both, lets the log queue
// drain and parses jobLines() (the job's log lines, read after the drain).
// A failed load or context creation throws a JobError (with .cleanup, which
// frees what was loaded, for the batch mode).
async function measure(modelPath, s, jobLines) {
  const { GgufInsights, readGgufFileInfo, GgmlType } = nlc;
  const { contextSize, sequences, batchSize, flashAttention, gpuLayers, useMmap, kvKey, kvValue } = s;
  const ggmlTypeId = (t) => (t == null ? GgmlType.F16 : typeof t === "number" ? t : GgmlType[t]);
  const result = { versions: versions(), model: modelPath, settings: { contextSize, sequences, batchSize: batchSize ?? null, flashAttention: flashAttention ?? "default", kvCacheKeyType: kvKey ?? "F16", kvCacheValueType: kvValue ?? "F16", gpuLayers, useMmap } };

  // ---- node-llama-cpp's own estimate, before loading ---------------------------------
  phase = "estimate";
  try {
    const info = await readGgufFileInfo(modelPath);
    const insights = await GgufInsights.from(info, llama);
    const ctxOpts = {
      contextSize, modelGpuLayers: gpuLayers, batchSize, sequences,
      // what node-llama-cpp itself passes to this heuristic when its V2 estimate fails
      flashAttention: flashAttention === true,
      kvCacheKeyType: ggmlTypeId(kvKey), kvCacheValueType: ggmlTypeId(kvValue),
    };
    result.estimate = {
      // the documented heuristic (deprecated in 3.x but still the fallback)
      model: insights.estimateModelResourceRequirements({ gpuLayers, useMmap }),
      context: insights.estimateContextResourceRequirements(ctxOpts),
      context_no_graph: insights.estimateContextResourceRequirements({ ...ctxOpts, includeGraphOverhead: false }),
    };
    try {
      // V2 runs llama.cpp itself with no_alloc (a "simulator"); kept for reference
      result.estimate.model_v2 = await insights.estimateModelResourceRequirementsV2({ gpuLayers, useMmap });
      result.estimate.context_v2 = await insights.estimateContextResourceRequirementsV2({ ...ctxOpts, flashAttention: flashAttention ?? "auto", useMmap });
    } catch (e) {
      result.estimate.v2_error = e.message;
    }
  } catch (e) {
    result.estimate = { error: e.message };
  }

  // ---- load and create the context -----------------------------------------------------
  let model, context;
  phase = "load";
  try {
    model = await llama.loadModel({ modelPath, gpuLayers, useMmap });
  } catch (e) {
    throw new JobError(1, `loading ${modelPath} failed: ${e.message}`, { versions: result.versions, log_tail: tail(jobLines()) });
  }
  result.model_size_bytes = model.size; // llama_model_size(): sum of tensor bytes
  phase = "context";
  try {
    const opts = { contextSize, sequences };
    if (flashAttention != null) opts.flashAttention = flashAttention;
    if (batchSize != null) opts.batchSize = batchSize;
    if (kvKey != null) opts.experimentalKvCacheKeyType = kvKey;
    if (kvValue != null) opts.experimentalKvCacheValueType = kvValue;
    if (s.threads != null) opts.threads = s.threads;
    context = await model.createContext(opts);
  } catch (e) {
    const err = new JobError(1, `creating the context failed: ${e.message}`, { versions: result.versions, log_tail: tail(jobLines()) });
    err.cleanup = () => model.dispose();
    throw err;
  }
  result.context = { contextSize: context.contextSize, batchSize: context.batchSize, flashAttention: context.flashAttention };
  try {
    result.memory_breakdown = context._ctx.getMemoryBreakdown(); // KV + compute, exact bytes
  } catch (e) {
    result.memory_breakdown = { error: e.message };
  }
  if (s.evaluate) {
    phase = "evaluate";
    try {
      const seq = context.getSequence();
      const tokens = model.tokenize("The quick brown fox jumps over the lazy dog. 0123456789 ünïcödé");
      await seq.evaluateWithoutGeneratingNewTokens(tokens);
      result.evaluated_tokens = tokens.length;
      result.detokenized = model.detokenize(tokens);
    } catch (e) {
      result.evaluate_error = e.message;
    }
  }
  phase = "dispose";
  await context.dispose();
  await model.dispose();

  // ---- parse -----------------------------------------------------------------------------
  // llama.cpp's log lines reach the logger asynchronously (a queue drained on
  // the main thread), so they are matched by content, never by the phase in
  // which they arrived; let the queue drain first. node-llama-cpp's own
  // "simulator" (the V2 estimate) does not forward llama.cpp's lines, so every
  // matched line belongs to the one real load and context.
  await drain();
  const lines = jobLines();
  result.engine = parseEngine(lines.map((l) => l.text));
  result.warnings = lines.filter((l) => l.level === "warn" || l.level === "error").map((l) => l.text).slice(0, 20);
  return { result, lines };
}

function parseEngine(all) {
  const num = (s) => Number(s);
  const engine = { model_buffers_mib: {}, output_buffers_mib: {}, kv_buffers_mib: {}, compute_buffers_mib: {}, compute_buffers_mib_4dp: {}, cparams: {}, fused_ops: {}, info: {} };
  for (const t of all) {
    let m;
    if ((m = t.match(/load_tensors:\s+(\S+) model buffer size =\s+([\d.]+) MiB/))) engine.model_buffers_mib[m[1]] = num(m[2]);
    else if ((m = t.match(/print_info: (n_vocab|n_embd|n_layer|n_head|n_head_kv|n_ff|n_embd_head_k|n_embd_head_v|n_ctx_train|n_embd_k_gqa|n_embd_v_gqa)\s+= (\d+)/))) engine.info[m[1]] = num(m[2]);
    else if ((m = t.match(/print_info: file size\s+= ([\d.]+) (\w+)/))) engine.info.file_size = `${m[1]} ${m[2]}`;
    else if ((m = t.match(/print_info: model params\s+= (.+)$/))) engine.info.model_params = m[1].trim();
    else if ((m = t.match(/load_tensors: loading model tensors.*\(load_mode = (\w+)\)/))) engine.info.load_mode = m[1];
    else if ((m = t.match(/cannot be used with preferred buffer type (\S+), using (\S+) instead/))) engine.info.buffer_type_fallback = `${m[1]} -> ${m[2]}`;
  }
  for (const t of all) {
    let m;
    if ((m = t.match(/^llama_context: (n_seq_max|n_ctx|n_ctx_seq|n_batch|n_ubatch|causal_attn|flash_attn|kv_unified|n_outputs_max|n_outputs_max_per_seq|n_rs_seq)\s+= (\S+)/)))
      engine.cparams[m[1]] = /^\d+$/.test(m[2]) ? num(m[2]) : m[2];
    else if ((m = t.match(/llama_context:\s+(\S+)\s+output buffer size =\s+([\d.]+) MiB/))) engine.output_buffers_mib[m[1]] = num(m[2]);
    else if ((m = t.match(/output_reserve: reallocating output buffer from size ([\d.]+) MiB to ([\d.]+) MiB/))) engine.output_realloc_mib = num(m[2]);
    // a sliding-window model has two caches (llama_kv_cache_iswa: base and SWA), each logging its own buffer
    else if ((m = t.match(/llama_kv_cache:\s+(\S+) KV buffer size =\s+([\d.]+) MiB/))) engine.kv_buffers_mib[m[1]] = (engine.kv_buffers_mib[m[1]] ?? 0) + num(m[2]);
    else if ((m = t.match(/llama_kv_cache: size =\s+([\d.]+) MiB \(\s*(\d+) cells,\s+(\d+) layers,\s+(\d+)\/(\d+) seqs\), K \((\w+)\):\s+([\d.]+) MiB, V \((\w+)\):\s+([\d.]+) MiB/)))
  {
      // the first cache (the only one, or iSWA's non-SWA cache) is engine.kv; every cache is in engine.kv_caches
      const kv = { size_mib: num(m[1]), cells: num(m[2]), layers: num(m[3]), n_seq_max: num(m[4]), n_stream: num(m[5]), k_type: m[6], k_mib: num(m[7]), v_type: m[8], v_mib: num(m[9]) };
      (engine.kv_caches ??= []).push(kv);
      engine.kv ??= kv;
    }
    else if ((m = t.match(/llama_kv_cache: attn_rot_(k|v) = (\d+)/))) engine[`attn_rot_${m[1]}`] = num(m[2]);
    else if ((m = t.match(/sched_reserve:\s+(\S+) compute buffer size =\s+([\d.]+) MiB/))) engine.compute_buffers_mib[m[1]] = num(m[2]);
    else if ((m = t.match(/sched_reserve: graph(?: \(pp bs=(\d+), tg bs=(\d+)\))?: nodes = ([\d /]+), splits = ([\d /]+), input objects = ([\d /]+), input tensors = ([\d /]+)/))) {
      const pair = (s) => s.trim().split(" / ").map(num);
      engine.graph = { nodes: pair(m[3]), splits: pair(m[4]), input_objects: pair(m[5]), input_tensors: pair(m[6]) };
      if (m[1]) engine.graph.pp_tg_bs = [num(m[1]), num(m[2])];
    } else if ((m = t.match(/sched_reserve: max_nodes = (\d+)/))) engine.max_nodes = num(m[1]);
    else if ((m = t.match(/sched_reserve: worst-case: n_tokens = (\d+), n_seqs = (\d+), n_outputs = (\d+)/))) engine.worst_case = { n_tokens: num(m[1]), n_seqs: num(m[2]), n_outputs: num(m[3]) };
    else if ((m = t.match(/resolve_fused_ops: (.+?) (enabled|not supported, set to disabled)$/))) engine.fused_ops[m[1]] = m[2] === "enabled";
    else if ((m = t.match(/llama_context: n_ctx is not divisible by n_seq_max - rounding down to (\d+)/))) engine.n_ctx_rounded_down = num(m[1]);
  }
  for (const t of all) {
    const m = t.match(/~llama_context:\s+(\S+) compute buffer size (?:is|of)\s+([\d.]+) MiB/);
    if (m) engine.compute_buffers_mib_4dp[m[1]] = num(m[2]);
  }
  // "auto" is resolved by a probe graph (llama_context::resolve_fused_ops)
  engine.flash_attn_effective = engine.cparams.flash_attn === "enabled" ||
    (engine.cparams.flash_attn === "auto" && engine.fused_ops["Flash Attention"] === true);
  return engine;
}

// ---- the single mode ---------------------------------------------------------------
async function single() {
  let settings = {};
  if (positional[1] != null) {
    try {
      settings = JSON.parse(positional[1]);
    } catch (e) {
      fail(2, `settings are not JSON: ${e.message}`);
    }
  }
  const timer = setTimeout(() => {
    fail(3, `timed out after ${timeoutS} s`, { log_tail: tail(logLines) });
  }, timeoutS * 1000);
  timer.unref();
  try {
    const modelPath = checkJob(positional[0], settings);
    await importNodeLlamaCpp();
    const s = resolveSettings(settings);
    await startLlama();
    const { result, lines } = await measure(modelPath, s, () => logLines);
    if (logFile) writeLog(logFile, lines);
    process.stdout.write(JSON.stringify(result) + "\n");
    process.exit(0);
  } catch (e) {
    if (e instanceof JobError) fail(e.code, e.message, e.extra);
    throw e;
  }
}

// ---- the batch mode -------------------------------------------------------------------
async function batch() {
  let jobs;
  try {
    jobs = JSON.parse(fs.readFileSync(batchFile, "utf8"));
  } catch (e) {
    fail(2, `--batch ${batchFile}: ${e.message}`);
  }
  if (!Array.isArray(jobs)) fail(2, `--batch ${batchFile}: not a JSON array of jobs`);
  let printed = 0; // jobs whose line is out
  let status = 0;
  const print = (obj) => {
    process.stdout.write(JSON.stringify(obj) + "\n");
    ++printed;
  };
  const printError = (i, code, message, extra = {}) => {
    print({ error: message, ...extra });
    process.stderr.write(`measure.mjs: job ${i}: ${message}\n`);
    status = Math.max(status, code === 2 ? 1 : code);
  };
  // --timeout counts per job (and once for loading node-llama-cpp)
  let jobStart = 0; // where the current job's lines begin in logLines
  let initLines = [];
  let timer = null;
  const arm = (i) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      const message = `timed out after ${timeoutS} s`;
      if (i < 0) { // loading node-llama-cpp: every job's line says so
        while (printed < jobs.length) printError(printed, 3, message, { log_tail: tail(logLines) });
      } else {
        // (unless job i's line is out, and what ran past the time was freeing it)
        if (printed === i) printError(i, 3, message, { log_tail: tail(initLines.concat(logLines.slice(jobStart))) });
        while (printed < jobs.length) printError(printed, 3, `not run: job ${i} timed out after ${timeoutS} s`);
      }
      process.exit(3);
    }, timeoutS * 1000);
    timer.unref();
  };

  arm(-1);
  try {
    await importNodeLlamaCpp();
    await startLlama();
  } catch (e) {
    if (!(e instanceof JobError)) throw e;
    for (let i = 0; i < jobs.length; i++) printError(i, e.code, e.message, e.extra);
    process.exit(status);
  }
  // getLlama()'s own lines (the backend it loaded) may still be queued
  await drain();
  initLines = logLines.slice();

  for (let i = 0; i < jobs.length; i++) {
    arm(i);
    const job = jobs[i];
    jobStart = logLines.length;
    const jobLines = () => initLines.concat(logLines.slice(jobStart));
    let loading = false; // the engine was asked to load: lines may still be queued
    try {
      if (job == null || typeof job !== "object" || Array.isArray(job) || typeof job.model !== "string")
        throw new JobError(2, "a job is an object with a model path, settings and log");
      const modelPath = checkJob(job.model, job.settings ?? {});
      const s = resolveSettings(job.settings ?? {});
      loading = true;
      const { result, lines } = await measure(modelPath, s, jobLines);
      if (job.log != null) writeLog(String(job.log), lines);
      print(result);
    } catch (e) {
      // anything else that went wrong (a log file that cannot be written, a
      // failed dispose) is that job's failure too
      if (e instanceof JobError) printError(i, e.code, e.message, e.extra);
      else printError(i, 1, String(e?.message ?? e));
      // free what the job loaded, and keep its late lines out of the next job's log
      if (e?.cleanup) {
        phase = "dispose";
        try {
          await e.cleanup();
        } catch {}
      }
      if (loading) await drain();
    }
  }
  process.exit(status);
}

if (batchFile != null) await batch();
else await single();
