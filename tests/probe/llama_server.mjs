#!/usr/bin/env node
// A small OpenAI-compatible HTTP server on the REAL llama.cpp engine (the CPU
// build that node-llama-cpp ships in npm), for `aimem probe`'s tests. It is
// not llama.cpp's own llama-server (that is a separate native binary that
// Debian does not package); it speaks the same endpoints and metric names, and
// every request gets its OWN llama.cpp context sized to its prompt plus
// max_tokens, so the KV cache and compute buffers (and so the process's
// memory) grow with context length AND with concurrency, as on a real server
// with one slot per request.
//
//   node tests/probe/llama_server.mjs --model PATH [--host 127.0.0.1] [--port 0]
//        [--threads N] [--max-context N] [--parallel N] [--batch N]
//        [--flash-attention on|off] [--modules DIR]
//
// Memory: glibc raises its mmap threshold to the size of each freed block (up
// to 32 MiB), after which a disposed context's buffers stay in the heap; run
// with GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 so that RSS follows
// the requests in flight (tests/support/llama_server.cc does).
//
// Prints exactly one line on stdout, `listening on http://HOST:PORT`, once the
// model is loaded and the socket accepts; everything else goes to stderr.
// Endpoints: GET /health, GET /v1/models, POST /tokenize, POST /v1/completions,
// POST /v1/chat/completions (streamed as server-sent events or not), GET
// /metrics (llama.cpp server's Prometheus names). Exit status: 0 after
// SIGTERM/SIGINT, 1 when the model cannot be loaded or the port bound, 2 for
// bad arguments.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const kUsage =
  "usage: node llama_server.mjs --model PATH [--host 127.0.0.1] [--port 0] [--threads N]\n" +
  "       [--max-context N] [--parallel N] [--batch N] [--flash-attention on|off] [--modules DIR]\n" +
  "       [--pid-file PATH]\n";
const kMaxBody = 8 << 20; // a request body larger than this is refused (413)
const kCtxAlign = 256; // llama.cpp pads n_ctx to 256 anyway

function die(code, message) {
  process.stderr.write(`llama_server.mjs: ${message}\n`);
  process.exit(code);
}

// ---- arguments --------------------------------------------------------------
// threads: 1 per request by default. ggml's worker threads spin at a barrier
// after every graph node, so on shared or busy cores a second thread makes a
// request up to 100x slower (measured: 0.8 s against 8 ms per token at load
// 8 on 2 cores); concurrent requests run on separate threads anyway.
const opts = { pidFile: null, model: null, host: "127.0.0.1", port: 0, threads: 1, maxContext: 8192, parallel: 16, batch: 512, flashAttention: false, modules: null };
{
  const argv = process.argv.slice(2);
  const intArg = (name, v, min) => {
    if (v == null || !/^\d+$/.test(v) || Number(v) < min) die(2, `${name}: '${v ?? ""}' is not an integer >= ${min}\n${kUsage}`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--help" || a === "-h") {
      process.stdout.write(kUsage);
      process.exit(0);
    }
    const v = argv[i + 1];
    if (v == null) die(2, `${a} needs a value\n${kUsage}`);
    i++;
    if (a === "--model") opts.model = v;
    else if (a === "--host") opts.host = v;
    else if (a === "--port") opts.port = intArg(a, v, 0);
    else if (a === "--threads") opts.threads = intArg(a, v, 0);
    else if (a === "--max-context") opts.maxContext = intArg(a, v, 1);
    else if (a === "--parallel") opts.parallel = intArg(a, v, 1);
    else if (a === "--batch") opts.batch = intArg(a, v, 1);
    else if (a === "--modules") opts.modules = v;
    else if (a === "--pid-file") opts.pidFile = v;
    else if (a === "--flash-attention") {
      if (v !== "on" && v !== "off") die(2, `--flash-attention: '${v}' is not on or off`);
      opts.flashAttention = v === "on";
    } else die(2, `unknown option ${a}\n${kUsage}`);
  }
  if (!opts.model) die(2, `--model is required\n${kUsage}`);
  if (opts.port > 65535) die(2, `--port: ${opts.port} is not a port`);
  if (!fs.existsSync(opts.model)) die(1, `${opts.model}: no such file`);
}

// ---- node-llama-cpp ---------------------------------------------------------
// ESM imports ignore NODE_PATH, so the package is found by hand: --modules,
// then NODE_PATH, then the repository's build-node/node_modules, then the
// ordinary resolution.
async function importNodeLlamaCpp() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dirs = [];
  if (opts.modules) dirs.push(opts.modules);
  for (const p of (process.env.NODE_PATH ?? "").split(path.delimiter)) if (p) dirs.push(p);
  dirs.push(path.join(here, "..", "..", "build-node", "node_modules"));
  for (const dir of dirs) {
    const pkg = path.join(path.resolve(dir), "node-llama-cpp");
    const pj = path.join(pkg, "package.json");
    if (!fs.existsSync(pj)) continue;
    const json = JSON.parse(fs.readFileSync(pj, "utf8"));
    const exp = json.exports?.["."];
    const entry = (typeof exp === "string" ? exp : exp?.import ?? exp?.default) ?? json.main ?? "dist/index.js";
    return import(pathToFileURL(path.join(pkg, entry)).href);
  }
  if (opts.modules) throw new Error(`node-llama-cpp not found under --modules ${opts.modules}`);
  return import("node-llama-cpp");
}

let nlc, llama, model;
try {
  nlc = await importNodeLlamaCpp();
} catch (e) {
  die(1, `cannot load node-llama-cpp (pass --modules DIR or set NODE_PATH): ${e.message}`);
}
try {
  const llamaOpts = { gpu: false, build: "never", logLevel: nlc.LlamaLogLevel.warn, progressLogs: false };
  // maxThreads stays node-llama-cpp's default (the machine's cores): it is a
  // budget shared by all contexts, so setting it to --threads would serialise
  // concurrent requests
  llama = await nlc.getLlama(llamaOpts);
  model = await llama.loadModel({ modelPath: path.resolve(opts.model), gpuLayers: 0 });
} catch (e) {
  die(1, `loading ${opts.model} failed: ${e.message}`);
}
const modelId = path.basename(opts.model);
// llama.cpp aborts the process on an out-of-range token id, so ids are checked here
const nVocab = model.fileInfo?.metadata?.tokenizer?.ggml?.tokens?.length ?? 0;

// ---- metrics (llama.cpp tools/server handle_metrics names) -------------------
const metrics = { processing: 0, deferred: 0, promptTokens: 0, promptSeconds: 0, predicted: 0, predictedSeconds: 0, nDecode: 0, nTokensMax: 0 };
function metricsText() {
  const rows = [
    ["prompt_tokens_total", "counter", "Number of prompt tokens processed, excluding cached tokens", metrics.promptTokens],
    ["prompt_seconds_total", "counter", "Total time spent processing prompts", metrics.promptSeconds],
    ["tokens_predicted_total", "counter", "Number of generation tokens processed", metrics.predicted],
    ["tokens_predicted_seconds_total", "counter", "Total time spent generating tokens", metrics.predictedSeconds],
    ["n_decode_total", "counter", "Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding", metrics.nDecode],
    ["n_tokens_max", "counter", "Largest observed sequence length (prompt + generation)", metrics.nTokensMax],
    ["requests_processing", "gauge", "Number of requests processing.", metrics.processing],
    ["requests_deferred", "gauge", "Number of requests deferred.", metrics.deferred],
  ];
  return rows.map(([n, t, h, v]) => `# HELP llamacpp:${n} ${h}\n# TYPE llamacpp:${n} ${t}\nllamacpp:${n} ${Number(v.toFixed ? v.toFixed(6) : v)}\n`).join("");
}

// ---- a bounded count of requests in flight; the rest wait in FIFO order -------
const waiting = [];
let inFlight = 0;
function acquire() {
  if (inFlight < opts.parallel) {
    inFlight++;
    return Promise.resolve();
  }
  metrics.deferred++;
  return new Promise((resolve) => waiting.push(resolve));
}
function release() {
  const next = waiting.shift();
  if (next) {
    metrics.deferred--;
    next(); // the slot passes straight to the next request
  } else inFlight--;
}

// ---- HTTP helpers -------------------------------------------------------------
class HttpError extends Error {
  constructor(status, message, type = "invalid_request_error", code = null) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
  }
}
function sendJson(res, status, obj) {
  if (res.headersSent) return;
  const body = JSON.stringify(obj);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}
function sendError(res, e) {
  const status = e instanceof HttpError ? e.status : 500;
  const type = e instanceof HttpError ? e.type : "server_error";
  if (!(e instanceof HttpError)) process.stderr.write(`llama_server.mjs: ${e?.stack ?? e}\n`);
  if (res.headersSent) {
    // mid-stream: an error event the client can see, then the end
    if (!res.writableEnded) res.end(`data: ${JSON.stringify({ error: { message: String(e?.message ?? e), type, code: status } })}\n\n`);
    return;
  }
  sendJson(res, status, { error: { message: String(e?.message ?? e), type, code: e?.code ?? status } });
}
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size > kMaxBody) {
        reject(new HttpError(413, `request body over ${kMaxBody} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
async function readJson(req) {
  const text = await readBody(req);
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, `request body is not JSON: ${e.message}`);
  }
  if (v == null || typeof v !== "object" || Array.isArray(v)) throw new HttpError(400, "request body must be a JSON object");
  return v;
}
function optInt(body, names, dflt, min, max) {
  for (const n of names) {
    const v = body[n];
    if (v == null) continue;
    if (!Number.isInteger(v) || v < min || v > max) throw new HttpError(400, `'${n}' must be an integer in [${min}, ${max}]`);
    return v;
  }
  return dflt;
}

// ---- prompts --------------------------------------------------------------------
function withBos(tokens) {
  const bos = model.tokens.bos;
  return model.tokens.shouldPrependBosToken && bos != null ? [bos, ...tokens] : tokens;
}
// A prompt is a string, a one-element array of a string, or token ids (as
// llama.cpp accepts), so a client can send an exact number of tokens.
function completionPrompt(body) {
  let p = body.prompt;
  if (Array.isArray(p) && p.length === 1 && typeof p[0] === "string") p = p[0];
  if (typeof p === "string") return withBos(model.tokenize(p));
  if (Array.isArray(p) && p.length > 0 && p.every((t) => Number.isInteger(t) && t >= 0 && t < nVocab)) return p;
  throw new HttpError(400, `'prompt' must be a string or a non-empty array of token ids below ${nVocab}`);
}
// No chat template in the tiny model: a plain one (role tags, one per line).
function chatPrompt(body) {
  const msgs = body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) throw new HttpError(400, "'messages' must be a non-empty array");
  let text = "";
  for (const [i, m] of msgs.entries()) {
    if (m == null || typeof m.role !== "string") throw new HttpError(400, `messages[${i}].role must be a string`);
    let c = m.content;
    if (Array.isArray(c)) c = c.map((part) => (part?.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
    if (typeof c !== "string") throw new HttpError(400, `messages[${i}].content must be a string`);
    text += `<|${m.role}|>\n${c}\n`;
  }
  text += "<|assistant|>\n";
  return withBos(model.tokenize(text));
}

// ---- one generation -----------------------------------------------------------------
// Creates a context for this request alone (prompt + max_tokens, rounded up),
// evaluates, calls onToken(text) per generated token, disposes the context.
async function generate({ tokens, maxTokens, ignoreEos, temperature, seed, aborted, onToken }) {
  const need = tokens.length + maxTokens;
  const contextSize = Math.ceil(need / kCtxAlign) * kCtxAlign;
  await acquire();
  metrics.processing++;
  let context = null;
  const produced = [];
  let finish = "length";
  try {
    if (aborted()) return { finish: "abort", completionTokens: 0 };
    context = await model.createContext({
      contextSize,
      sequences: 1,
      batchSize: Math.min(opts.batch, contextSize),
      flashAttention: opts.flashAttention,
      threads: opts.threads > 0 ? { ideal: opts.threads, min: 1 } : undefined,
      // the point is to use the memory: never let node-llama-cpp refuse a
      // context on its own estimate (a cgroup limit should kill us instead)
      ignoreMemorySafetyChecks: true,
      failedCreationRemedy: false,
    });
    const seq = context.getSequence();
    const t0 = performance.now();
    let tFirst = null;
    let pending = []; // tokens whose text is not yet complete UTF-8
    const evalOpts = { temperature: temperature ?? 0 };
    if (seed != null) evalOpts.seed = seed;
    if (maxTokens === 0) {
      await seq.evaluateWithoutGeneratingNewTokens(tokens);
      tFirst = performance.now();
    } else {
      for await (const tok of seq.evaluate(tokens, evalOpts)) {
        if (tFirst == null) tFirst = performance.now();
        if (aborted()) {
          finish = "abort";
          break;
        }
        if (!ignoreEos && model.isEogToken(tok)) {
          finish = "stop";
          break;
        }
        produced.push(tok);
        pending.push(tok);
        // hold back a character split over byte tokens, but still one event per token
        let text = model.detokenize(pending, false, produced.slice(Math.max(0, produced.length - pending.length - 4), produced.length - pending.length));
        if (text.endsWith("\uFFFD") && pending.length < 4) text = "";
        else pending = [];
        onToken(text);
        if (produced.length >= maxTokens) break;
      }
    }
    const t1 = performance.now();
    metrics.promptTokens += tokens.length;
    metrics.predicted += produced.length;
    metrics.promptSeconds += ((tFirst ?? t1) - t0) / 1000;
    metrics.predictedSeconds += (t1 - (tFirst ?? t1)) / 1000;
    metrics.nDecode += Math.ceil(tokens.length / Math.min(opts.batch, contextSize)) + Math.max(0, produced.length - 1);
    metrics.nTokensMax = Math.max(metrics.nTokensMax, tokens.length + produced.length);
    return { finish, completionTokens: produced.length };
  } finally {
    metrics.processing--;
    if (context) await context.dispose().catch((e) => process.stderr.write(`llama_server.mjs: dispose: ${e.message}\n`));
    release();
  }
}

// ---- completions (both shapes) ------------------------------------------------------
let nextId = 1;
async function handleCompletion(req, res, chat) {
  const body = await readJson(req);
  const tokens = chat ? chatPrompt(body) : completionPrompt(body);
  if (tokens.length === 0) throw new HttpError(400, "the prompt is empty");
  const maxTokens = optInt(body, chat ? ["max_completion_tokens", "max_tokens", "n_predict"] : ["max_tokens", "n_predict"], 16, 0, 1 << 30);
  if (tokens.length + maxTokens > opts.maxContext)
    throw new HttpError(400, `the request needs ${tokens.length + maxTokens} tokens (prompt ${tokens.length} + max_tokens ${maxTokens}), over this server's context of ${opts.maxContext} tokens`, "invalid_request_error", "context_length_exceeded");
  if (body.ignore_eos != null && typeof body.ignore_eos !== "boolean") throw new HttpError(400, "'ignore_eos' must be a boolean");
  if (body.temperature != null && (typeof body.temperature !== "number" || body.temperature < 0)) throw new HttpError(400, "'temperature' must be a number >= 0");
  const stream = body.stream === true;
  const includeUsage = stream && body.stream_options?.include_usage === true;
  const id = `${chat ? "chatcmpl" : "cmpl"}-${nextId++}`;
  const created = Math.floor(Date.now() / 1000);
  const object = chat ? "chat.completion" : "text_completion";
  const chunkObject = chat ? "chat.completion.chunk" : "text_completion";
  let closed = false;
  res.on("close", () => {
    if (!res.writableFinished) closed = true; // the client went away
  });
  const choice = (text, finish) =>
    chat
      ? { index: 0, delta: text == null ? {} : { content: text }, finish_reason: finish }
      : { index: 0, text: text ?? "", logprobs: null, finish_reason: finish };
  const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  let first = true;
  let all = "";
  const result = await generate({
    tokens, maxTokens, ignoreEos: body.ignore_eos === true, temperature: body.temperature, seed: body.seed,
    aborted: () => closed,
    onToken: (text) => {
      if (!stream) {
        all += text;
        return;
      }
      if (first) {
        res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
        if (chat) send({ id, object: chunkObject, created, model: modelId, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
        first = false;
      }
      send({ id, object: chunkObject, created, model: modelId, choices: [choice(text, null)] });
    },
  });
  if (closed || res.writableEnded) return;
  const usage = { prompt_tokens: tokens.length, completion_tokens: result.completionTokens, total_tokens: tokens.length + result.completionTokens };
  const finish = result.finish === "stop" ? "stop" : "length";
  if (!stream) {
    const c = chat ? { index: 0, message: { role: "assistant", content: all }, finish_reason: finish } : { index: 0, text: all, logprobs: null, finish_reason: finish };
    sendJson(res, 200, { id, object, created, model: modelId, choices: [c], usage });
    return;
  }
  if (first) res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
  send({ id, object: chunkObject, created, model: modelId, choices: [choice(null, finish)] });
  if (includeUsage) send({ id, object: chunkObject, created, model: modelId, choices: [], usage });
  res.end("data: [DONE]\n\n");
}

async function handle(req, res) {
  const url = new URL(req.url, "http://localhost");
  const route = `${req.method} ${url.pathname}`;
  switch (route) {
    case "GET /health":
      return sendJson(res, 200, { status: "ok" });
    case "GET /v1/models":
      return sendJson(res, 200, { object: "list", data: [{ id: modelId, object: "model", created: 0, owned_by: "llamacpp", meta: { n_ctx: opts.maxContext, size: model.size } }] });
    case "GET /metrics":
      res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" });
      return res.end(metricsText());
    case "POST /tokenize": {
      const body = await readJson(req);
      if (typeof body.content !== "string") throw new HttpError(400, "'content' must be a string");
      const t = model.tokenize(body.content);
      return sendJson(res, 200, { tokens: body.add_special === true ? withBos(t) : t });
    }
    case "POST /v1/completions":
    case "POST /completions":
      return handleCompletion(req, res, false);
    case "POST /v1/chat/completions":
    case "POST /chat/completions":
      return handleCompletion(req, res, true);
    default:
      if (["/health", "/v1/models", "/metrics", "/tokenize", "/v1/completions", "/completions", "/v1/chat/completions", "/chat/completions"].includes(url.pathname))
        throw new HttpError(405, `${req.method} is not allowed on ${url.pathname}`);
      throw new HttpError(404, `no endpoint ${url.pathname}`, "not_found_error");
  }
}

// ---- serve --------------------------------------------------------------------------
const server = http.createServer((req, res) => {
  res.on("error", (e) => process.stderr.write(`llama_server.mjs: response: ${e.message}\n`)); // a client gone mid-write
  handle(req, res).catch((e) => sendError(res, e));
});
server.keepAliveTimeout = 5000;
server.on("clientError", (err, socket) => {
  if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
});
server.on("error", (e) => die(1, `cannot listen on ${opts.host}:${opts.port}: ${e.message}`));
server.listen(opts.port, opts.host, () => {
  const a = server.address();
  // before the line, so whoever waits for the line can read the pid
  if (opts.pidFile) fs.writeFileSync(opts.pidFile, `${process.pid}\n`);
  process.stdout.write(`listening on http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}\n`);
});

// Stopping: in-flight requests are cut (their sockets closed) and the
// process exits; the kernel frees the engine's memory. Disposing the model
// first would fail the requests still evaluating with "Object is disposed".
function stop(signal) {
  process.stderr.write(`llama_server.mjs: ${signal}, stopping\n`);
  server.close();
  server.closeAllConnections?.();
  process.exit(0);
}
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("SIGINT", () => stop("SIGINT"));
// an exception never stops the server: log it and keep serving
process.on("unhandledRejection", (e) => process.stderr.write(`llama_server.mjs: unhandled: ${e?.stack ?? e}\n`));
process.on("uncaughtException", (e) => process.stderr.write(`llama_server.mjs: uncaught: ${e?.stack ?? e}\n`));
