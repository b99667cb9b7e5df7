// llamacpp_decode.mjs: llama.cpp's single-stream greedy decoding speed on a GGUF file, through
// node-llama-cpp's prebuilt CPU binaries (the way most users run llama.cpp from a script), for
// tools/bench/decode_sidebyside.sh. Usage:
//   node tools/bench/llamacpp_decode.mjs MODEL.gguf N THREADS [KV]
// Feeds token 1 as the prompt and generates N tokens at temperature 0; prints one line
// "llama.cpp tokens/s X (N tokens after the first, T threads, kv KV)", timed from the first
// generated token to the last, as `pelab sample` reports "tokens/s after the first". KV is the
// cache's type: F32 (default, as pelab's default cache) or F16 (llama.cpp's own default).
// node-llama-cpp is looked up from PELAB_LLAMACPP_DIR (where `npm install node-llama-cpp` ran).
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const where = process.env.PELAB_LLAMACPP_DIR ? { paths: [process.env.PELAB_LLAMACPP_DIR] } : undefined;
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(require.resolve("node-llama-cpp", where)).href);

const [model_path, n_text, threads_text, kv_text] = process.argv.slice(2);
if (!model_path || !n_text || !threads_text) {
    console.error("usage: node tools/bench/llamacpp_decode.mjs MODEL.gguf N THREADS [F32|F16]");
    process.exit(2);
}
const n = Number(n_text), threads = Number(threads_text), kv = kv_text || "F32";

const llama = await getLlama({ gpu: false, logLevel: LlamaLogLevel.error, build: "never" });
const model = await llama.loadModel({ modelPath: model_path });
const context = await model.createContext({
    contextSize: n + 16, batchSize: 512, threads, flashAttention: false,
    experimentalKvCacheKeyType: kv, experimentalKvCacheValueType: kv,
});
const seq = context.getSequence();
let count = 0, t_first = 0, t_last = 0;
for await (const tok of seq.evaluate([1], { temperature: 0 })) {
    void tok;
    const t = performance.now();
    if (count === 0) t_first = t;
    t_last = t;
    if (++count >= n) break;
}
const rate = count > 1 ? ((count - 1) * 1000) / (t_last - t_first) : 0;
console.log(`llama.cpp tokens/s ${rate.toFixed(1)} (${count - 1} tokens after the first, ${threads} threads, kv ${kv})`);
await context.dispose();
await model.dispose();
