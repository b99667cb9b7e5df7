// llamacpp_greedy.mjs: a GGUF file run by llama.cpp (through node-llama-cpp's prebuilt binaries), for
// tests/test_gguf.c's cross-check against pelab. Usage:
//   node tools/llamacpp_greedy.mjs MODEL.gguf IDS N [TEXT]
// IDS: the prompt as comma-separated token ids (fed as ids: no tokenizer on either side). Prints one
// JSON line: {"greedy": [N ids, temperature 0], "probs": [[vocab probabilities after each prompt
// token, temperature 1, no top-k/top-p/min-p]], "vocab": V}, and with TEXT "tokens": llama.cpp's
// ids of TEXT (no BOS added) and "text": llama.cpp's text of the prompt's ids. llama.cpp needs the
// file to hold a tokenizer (tokenizer.ggml.model "none" aborts in its tokenize). node-llama-cpp is looked up from the directory
// PELAB_LLAMACPP_DIR (where `npm install node-llama-cpp` ran), else as node resolves packages here.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const where = process.env.PELAB_LLAMACPP_DIR ? { paths: [process.env.PELAB_LLAMACPP_DIR] } : undefined;
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(require.resolve("node-llama-cpp", where)).href);

const [model_path, ids_text, n_text, text] = process.argv.slice(2);
if (!model_path || !ids_text || !n_text) {
    console.error("usage: node tools/llamacpp_greedy.mjs MODEL.gguf ID,ID,... N");
    process.exit(2);
}
const prompt = ids_text.split(",").map(Number);
const n = Number(n_text);

const llama = await getLlama({ gpu: false, logLevel: LlamaLogLevel.error, build: "never" });
const model = await llama.loadModel({ modelPath: model_path });
const vocab = Number(model.fileInfo.metadata?.llama?.vocab_size ?? 0);
// float32 keys and values (llama.cpp's default is F16) and no flash attention: the comparison is
// of the model, not of the cache's rounding
const context = await model.createContext({
    contextSize: Math.max(64, prompt.length + n + 8), batchSize: 512, threads: 1, flashAttention: false,
    experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
});

// probabilities after each prompt token, at temperature 1 with nothing cut
const seq = context.getSequence();
const sampling = { temperature: 1, topK: 0, topP: 1, minP: 0, seed: 1 };
const out = await seq.controlledEvaluate(prompt.map((t) => [t, { generateNext: { probabilities: true, options: sampling } }]));
const probs = out.map((o) => {
    const p = new Array(vocab).fill(0);
    for (const [tok, v] of o.next.probabilities) p[tok] = v;
    return p;
});
await seq.clearHistory();

// greedy continuation
const greedy = [];
for await (const tok of seq.evaluate(prompt, { temperature: 0 })) {
    greedy.push(tok);
    if (greedy.length >= n) break;
}
const result = { greedy, probs, vocab };
if (text !== undefined) {
    result.tokens = Array.from(model.tokenize(text, false));
    result.text = model.detokenize(prompt);
}
console.log(JSON.stringify(result));
await context.dispose();
await model.dispose();
