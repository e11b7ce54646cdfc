// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The Node twin of tools/bench/py_llama_experiment.py: an experiment loop
// that drives the real llama.cpp libraries through the prebuilt N-API addon
// of @node-llama-cpp/linux-x64 (llama-addon.node, loaded with
// process.dlopen as node-llama-cpp's own wrapper does, without the wrapper).
//
// usage: node node_llama_experiment.js LLAMA_DIR MODEL CYCLES [GEN [SLEEP_MS]] [--no-test-child] [--try-dlopen FILE]...
//
// Start-up follows node-llama-cpp's getLlama(): it first forks a child node
// that loads the addon, loads the backends and inits them (its
// testBindingBinary(), so that a broken binary cannot crash the caller),
// waits for the child's "done" and kills it, then loads the addon itself
// (--no-test-child skips the child). Each cycle: build a prompt in JS, tokenize it (AddonModel.tokenize: one
// llama_tokenize on the main thread), decode it and generate GEN tokens
// (AddonContext.decodeBatch: one llama_decode each, on a libuv worker
// thread; sampleToken, also on a worker), then sleep SLEEP_MS. The loop
// starts as soon as the model is loaded, as a user's script does: nothing
// waits for a profiler. Prints its own counts ("cycles N", "decode_calls
// N") and each cycle's wall time ("cycle_ms ...", process.hrtime.bigint(),
// CLOCK_MONOTONIC).
'use strict';
const path = require('path');

// The addon's tokenize (llama.cpp's common_tokenize) calls llama_tokenize
// with room for as many tokens as the text has bytes, and calls it again
// with the right size when that is too small. The tiny model has no piece
// for a word's letters (they fall back to one token per byte, plus three
// for each word's leading U+2581), so plain words never fit; words
// separated by the special "<unk>" (5 bytes, one token) do: one call per
// prompt, so --cycle-every llama_tokenize is one cycle per prompt.
const WORDS = ['hello', 'world', 'the', 'probe', 'token', 'a', 'b'];

function words(i, depth) {
	if (depth === 0) {
		const out = [];
		for (let k = 0; k < 6; k++) out.push(WORDS[(i * 7 + k) % WORDS.length]);
		return out;
	}
	return words(i, depth - 1).concat(words(i + depth, depth - 1).slice(0, 2));
}

function buildPrompt(i) {
	return '<s>' + words(i, 2).join('<unk>');
}

// The addon as node-llama-cpp's Llama constructor sets it up: the backend
// registry first, then the CPU backend variants next to the addon
// (each dlopen'ed and scored, all but the best dlclose'd), then init.
async function loadAddon(dir) {
	const addon = { exports: {} };
	process.dlopen(addon, path.join(dir, 'llama-addon.node'));
	const b = addon.exports;
	b.markLoaded();
	b.setLoggerLogLevel(2); // errors only (the addon's scale: 2 = error)
	b.loadBackends();
	if (b.getGpuType() == null) b.loadBackends(dir);
	await b.init();
	return b;
}

// node-llama-cpp's testBindingBinary(): a child node (this script, with
// EP_NLE_TEST_CHILD set) loads and inits the addon and says "done" on the
// IPC channel; the parent then kills it.
function testInChild(dir) {
	return new Promise((resolve, reject) => {
		const child = require('child_process').fork(__filename, [dir], {
			stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
			env: { ...process.env, EP_NLE_TEST_CHILD: '1' },
		});
		child.on('message', (m) => {
			if (m === 'done') {
				child.kill('SIGKILL');
				resolve();
			}
		});
		child.on('exit', (code, sig) => {
			if (sig !== 'SIGKILL') reject(new Error('the test child exited ' + (sig || code)));
		});
	});
}

function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

async function main() {
	if (process.env.EP_NLE_TEST_CHILD) {
		await loadAddon(process.argv[2]);
		process.send('done');
		return;
	}
	const args = [];
	const tryFirst = [];
	let testChild = true;
	for (let i = 2; i < process.argv.length; i++) {
		const a = process.argv[i];
		if (a === '--no-test-child') testChild = false;
		else if (a === '--try-dlopen') tryFirst.push(process.argv[++i]);
		else args.push(a);
	}
	const [dir, modelPath, nArg, genArg, sleepArg] = args;
	if (!dir || !modelPath || !nArg) {
		console.error('usage: node node_llama_experiment.js LLAMA_DIR MODEL CYCLES [GEN [SLEEP_MS]] [--no-test-child] [--try-dlopen FILE]...');
		process.exit(2);
	}
	const cycles = Number(nArg);
	const gen = Number(genArg ?? 4);
	const sleepMs = Number(sleepArg ?? 2);
	// An optional native module that fails to load (a missing dependency),
	// as `try { require('x.node') } catch {}` does in many Node programs.
	for (const f of tryFirst) {
		try {
			process.dlopen({ exports: {} }, f);
			console.log('try_dlopen loaded ' + f);
		} catch (e) {
			console.log('try_dlopen failed ' + f);
		}
	}
	if (testChild) await testInChild(dir);
	const b = await loadAddon(dir);
	const model = new b.AddonModel(modelPath, { gpuLayers: 0 });
	if (!(await model.init())) throw new Error('cannot load the model ' + modelPath);
	const ctx = new b.AddonContext(model, { contextSize: 256, batchSize: 128, sequences: 1, threads: 1 });
	if (!(await ctx.init())) throw new Error('cannot create the context');
	const sampler = new b.AddonSampler(model);
	sampler.applyConfig({ temperature: 0 });

	const times = [];
	let decodes = 0;
	let tokens = 0;
	let tokenizeCalls = 0;
	for (let i = 0; i < cycles; i++) {
		const t0 = process.hrtime.bigint();
		const prompt = buildPrompt(i);
		const toks = model.tokenize(prompt, true);
		tokens += toks.length;
		tokenizeCalls += toks.length > Buffer.byteLength(prompt) ? 2 : 1;
		ctx.disposeSequence(0);
		ctx.initBatch(toks.length);
		let [logit] = ctx.addToBatch(0, 0, toks, Uint32Array.of(toks.length - 1));
		await ctx.decodeBatch();
		decodes++;
		let pos = toks.length;
		for (let g = 0; g < gen; g++) {
			const t = await ctx.sampleToken(logit, sampler);
			if (t < 0) throw new Error('sampling failed');
			ctx.initBatch(1);
			[logit] = ctx.addToBatch(0, pos++, Uint32Array.of(t), Uint32Array.of(0));
			await ctx.decodeBatch();
			decodes++;
		}
		await sleep(sleepMs);
		times.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	sampler.dispose();
	await ctx.dispose();
	await model.dispose();
	await b.dispose();
	console.log('cycles ' + times.length);
	console.log('tokenize_calls ' + tokenizeCalls);
	console.log('decode_calls ' + decodes);
	console.log('prompt_tokens ' + tokens);
	console.log('cycle_ms ' + times.map((t) => t.toFixed(2)).join(' '));
}

main().catch((e) => {
	console.error(e && e.stack ? e.stack : String(e));
	process.exit(1);
});
