// regress/mcp_test.sh's MCP client: the official SDK's Client over
// stdio, starting fence-mcp as an agent's client would.  Usage:
//   node mcp_client.cjs NPMDIR FENCE-MCP SOCKET KEY CASE
// CASE main: the tools one after the other, each answer checked;
// CASE vanish: an exec that runs long, fence-mcp's pid written to
// mcp.pid and "running" printed once its output has come: the test
// kills this process there.  Any failed check exits 1, saying which.
'use strict';
const path = require('path');
const fs = require('fs');
const [npm, bin, sock, key, which] = process.argv.slice(2);
const sdk = path.join(npm, 'node_modules/@modelcontextprotocol/sdk/dist/cjs');
const { Client } = require(path.join(sdk, 'client/index.js'));
const { StdioClientTransport } = require(path.join(sdk, 'client/stdio.js'));
const { CallToolResultSchema } = require(path.join(sdk, 'types.js'));

function check(ok, what, got) {
	if (!ok) {
		console.error('FAILED: ' + what + ': ' + JSON.stringify(got));
		process.exit(1);
	}
	console.log('ok: ' + what);
}

async function call(client, name, args, opts) {
	return client.callTool({ name: name, arguments: args },
	    CallToolResultSchema, opts);
}

// Every result carries the fence's measured level and its verdicts.
function leveled(r, what) {
	const f = r.structuredContent && r.structuredContent.fence;
	check(f && /^L[0-9.]+$|^not-earned$/.test(f.level) && f.verdicts &&
	    typeof f.verdicts.kernel === 'string', what + ': level and verdicts',
	    r.structuredContent);
}

// The error a bad call gets: the JSON-RPC code.
async function refused(client, name, args, code, what) {
	try {
		await call(client, name, args);
	} catch (e) {
		check(e.code === code, what + ' is refused ' + code, e.message);
		return;
	}
	check(false, what + ' is refused', 'an answer');
}

async function main() {
	const transport = new StdioClientTransport({ command: bin,
	    args: ['-s', sock], stderr: 'inherit' });
	const client = new Client({ name: 'fenced-regress', version: '1' });
	await client.connect(transport);
	// Progress as it arrives: the SDK hands notifications to their
	// handler a tick later, after a response read with them (which
	// ends the call's progress handler), so its onprogress may miss
	// chunks that fence-mcp did send.
	const progress = [];
	const onmessage = transport.onmessage;
	transport.onmessage = (m) => {
		if (m.method === 'notifications/progress')
			progress.push(m.params);
		onmessage(m);
	};
	fs.writeFileSync('mcp.pid', String(transport.pid) + '\n');
	if (which === 'vanish') {
		let r = await call(client, 'boot', { key: key });
		check(!r.isError, 'boot', r.structuredContent);
		let seen = false;
		await call(client, 'exec', { key: key,
		    command: 'echo running; exec sleep 47.5' }, {
			onprogress: () => {
				if (!seen && progress.some((p) =>
				    /running/.test(p.message || ''))) {
					seen = true;
					console.log('running');
				}
			}, timeout: 60000 });
		check(false, 'the test kills this client before the end', '');
	}
	const tools = (await client.listTools()).tools.map((t) => t.name);
	check(['boot', 'exec', 'read_file', 'write_file', 'list', 'stop']
	    .every((n) => tools.includes(n)), 'tools/list', tools);
	await client.ping();

	let r = await call(client, 'boot', { key: key, tier: 'L1' });
	check(!r.isError && r.structuredContent.fence.key === key &&
	    r.structuredContent.fence.state === 'running', 'boot',
	    r.structuredContent);
	leveled(r, 'boot');
	console.log('level: ' + r.structuredContent.fence.level);

	r = await call(client, 'exec', { key: key, argv: ['echo', 'hi'] },
	    { onprogress: () => {} });
	const chunks = progress.map((p) => p.message);
	check(!r.isError && r.structuredContent.stdout === 'hi\n' &&
	    r.structuredContent.exit === 0, 'exec echo hi', r.structuredContent);
	leveled(r, 'exec');
	check(chunks.join('') === 'hi\n', 'exec: its output as progress',
	    chunks);
	check(r.content[0].type === 'text' &&
	    JSON.parse(r.content[0].text).stdout === 'hi\n',
	    'exec: the text content is the result', r.content);

	r = await call(client, 'exec', { key: key,
	    command: 'echo out; echo err >&2; exit 3', timeout_ms: 10000 });
	check(r.structuredContent.exit === 3 &&
	    r.structuredContent.stdout === 'out\n' &&
	    r.structuredContent.stderr === 'err\n', 'exec: stderr and status',
	    r.structuredContent);

	r = await call(client, 'snapshot', { key: key, name: 's1' });
	check(!r.isError && r.structuredContent.snapshot.name === 's1',
	    'snapshot', r.structuredContent);
	leveled(r, 'snapshot');

	const text = 'line one\nutf-8: \u00e9t\u00e9 \u2603\n';
	r = await call(client, 'write_file', { key: key, path: 'notes/a.txt',
	    content: text });
	check(r.isError && r.structuredContent.error.code !== undefined,
	    'write_file: no missing parents made', r.structuredContent);
	r = await call(client, 'write_file', { key: key, path: 'a.txt',
	    content: text });
	check(!r.isError && r.structuredContent.created === true,
	    'write_file', r.structuredContent);
	leveled(r, 'write_file');
	r = await call(client, 'read_file', { key: key, path: 'a.txt' });
	check(!r.isError && r.structuredContent.content === text, 'read_file',
	    r.structuredContent);
	r = await call(client, 'exec', { key: key, argv: ['cat', 'a.txt'] });
	check(r.structuredContent.stdout === text,
	    'the fence sees the file written', r.structuredContent);
	r = await call(client, 'read_file', { key: key, path: '' });
	check(!r.isError && r.structuredContent.entries.some((e) =>
	    e.name === 'a.txt' && e.kind === '-'), 'read_file: a listing',
	    r.structuredContent);
	r = await call(client, 'read_file', { key: key, path: '../../etc/passwd' });
	check(r.isError, 'read_file: out of the home is refused',
	    r.structuredContent);

	r = await call(client, 'restore', { key: key, name: 's1' });
	check(!r.isError && r.structuredContent.snapshot.name === 's1',
	    'restore', r.structuredContent);
	r = await call(client, 'read_file', { key: key, path: 'a.txt' });
	check(r.isError, 'restored: the file written after is gone',
	    r.structuredContent);

	r = await call(client, 'list', {});
	check(!r.isError && r.structuredContent.fences.some((f) =>
	    f.key === key && f.level !== undefined), 'list',
	    r.structuredContent);

	await refused(client, 'no_such_tool', {}, -32602, 'an unknown tool');
	await refused(client, 'exec', { key: key, argv: 7 }, -32602,
	    'exec with argv a number');
	await refused(client, 'exec', { key: key }, -32602,
	    'exec with no command');
	await refused(client, 'boot', { key: key, tier: 'L9' }, -32602,
	    'boot with an unknown tier');
	await refused(client, 'stop', { key: key, bogus: 1 }, -32602,
	    'an argument no tool takes');
	r = await call(client, 'exec', { key: 'no-such-fence', argv: ['true'] });
	check(r.isError && r.structuredContent.error.code === 'not-found',
	    'exec in no fence: isError', r.structuredContent);

	r = await call(client, 'stop', { key: key });
	check(!r.isError && r.structuredContent.fence.key === key, 'stop',
	    r.structuredContent);
	r = await call(client, 'list', {});
	check(!r.structuredContent.fences.some((f) => f.key === key &&
	    f.state === 'running'), 'stopped: not listed running',
	    r.structuredContent);
	await client.close();
}

main().catch((e) => {
	console.error('FAILED: ' + (e && e.stack || e));
	process.exit(1);
});
