// regress/mcp_test.sh's MCP client: the official SDK's Client over
// stdio, starting fence-mcp as an agent's client would.  Usage:
//   node mcp_client.cjs NPMDIR FENCE-MCP SOCKET KEY CASE
// CASE main: the tools one after the other, each answer checked;
// CASE vanish: an exec that runs long, fence-mcp's pid written to
// mcp.pid and "running" printed once its output has come: the test
// kills this process there.  CASE live: the fence KEY runs an HTTP
// server on port 8000 (mcp_test.sh started it): ports and terminals.
// Any failed check exits 1, saying which.
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

// GET url: [status, body], or the error's code.
function get(url) {
	const http = require('http');
	return new Promise((resolve) => {
		const q = http.get(url, (res) => {
			let body = '';
			res.on('data', (d) => { body += d; });
			res.on('end', () => resolve([res.statusCode, body]));
		});
		q.on('error', (e) => resolve([e.code, '']));
		q.setTimeout(10000, () => q.destroy(new Error('timeout')));
	});
}

// term_read until pred holds of what came, or the end; all of it.
async function readUntil(client, key, id, pred, what) {
	let all = '';
	let r;
	const t0 = Date.now();
	for (;;) {
		r = await call(client, 'term_read', { key: key, id: id,
		    wait_ms: 500 });
		check(!r.isError, what + ': term_read', r.structuredContent);
		all += r.structuredContent.terminal.output;
		if (pred(all, r.structuredContent.terminal))
			return [all, r];
		check(Date.now() - t0 < 10000 &&
		    !r.structuredContent.terminal.ended, what, all);
	}
}

async function live(client) {
	const tools = (await client.listTools()).tools.map((t) => t.name);
	check(['port_open', 'port_list', 'port_close', 'term_open',
	    'term_write', 'term_read', 'term_close'].every((n) =>
	    tools.includes(n)), 'tools/list: ports and terminals', tools);

	// Ports.
	let r = await call(client, 'port_list', { key: key });
	check(!r.isError && r.structuredContent.listening.includes(8000) &&
	    r.structuredContent.forwards.length === 0, 'port_list',
	    r.structuredContent);
	leveled(r, 'port_list');
	r = await call(client, 'port_open', { key: key, port: 8000 });
	const p = r.structuredContent.port;
	check(!r.isError && /^http:\/\/127\.0\.0\.1:[0-9]+\/$/.test(p.forward) &&
	    /\/ports\/8000/.test(p.path) && /ticket\?t=/.test(p.ticket_url) &&
	    p.access && p.access.forward, 'port_open', r.structuredContent);
	leveled(r, 'port_open');
	let [status, body] = await get(p.forward + 'hello.txt');
	check(status === 200 && body === 'hello through the forward\n',
	    'GET through the forward', [status, body]);
	r = await call(client, 'port_open', { key: key, port: 8000 });
	check(!r.isError && r.structuredContent.port.forward === p.forward,
	    'port_open again: the same forward', r.structuredContent);
	r = await call(client, 'port_list', { key: key });
	check(r.structuredContent.forwards.length === 1 &&
	    r.structuredContent.forwards[0].forward === p.forward,
	    'port_list: the forward', r.structuredContent);
	r = await call(client, 'port_open', { key: key, port: 8001 });
	check(r.isError && r.structuredContent.error.code === 'port-closed',
	    'port_open of a port nothing listens on: isError',
	    r.structuredContent);
	r = await call(client, 'port_close', { key: key, port: 8000 });
	check(!r.isError && r.structuredContent.closed === 8000, 'port_close',
	    r.structuredContent);
	leveled(r, 'port_close');
	[status, body] = await get(p.forward);
	check(status === 'ECONNREFUSED', 'closed: nothing listens there',
	    [status, body]);
	r = await call(client, 'port_close', { key: key, port: 8000 });
	check(r.isError && r.structuredContent.error.code === 'not-open',
	    'port_close again: isError', r.structuredContent);

	// A terminal running sh.
	r = await call(client, 'term_open', { key: key, argv: ['sh'],
	    cols: 100, rows: 30 });
	check(!r.isError && r.structuredContent.terminal.id >= 1 &&
	    r.structuredContent.terminal.running, 'term_open sh',
	    r.structuredContent);
	leveled(r, 'term_open');
	const id = r.structuredContent.terminal.id;
	r = await call(client, 'term_write', { key: key, id: id,
	    input: 'echo h""i\n' });
	check(!r.isError && r.structuredContent.written === 10, 'term_write',
	    r.structuredContent);
	leveled(r, 'term_write');
	// The echo of the line typed has h""i; sh's prompt may come first.
	await readUntil(client, key, id, (s) => /(^|\s)hi\r?$/m.test(s),
	    'hi read back');
	console.log('ok: hi read back');
	r = await call(client, 'term_write', { key: key, id: id,
	    input: 'exit 7\n' });
	check(!r.isError, 'term_write exit 7', r.structuredContent);
	let end;
	[, end] = await readUntil(client, key, id, (s, t) => t.ended,
	    'the end read');
	const t = end.structuredContent.terminal;
	check(t.ended && t.exit === 7 && t.signal === 0, 'its exit status',
	    t);
	leveled(end, 'term_read');
	r = await call(client, 'term_write', { key: key, id: id,
	    input: 'x' });
	check(r.isError && r.structuredContent.error.code ===
	    'terminal-ended', 'term_write after the end: isError',
	    r.structuredContent);
	r = await call(client, 'term_close', { key: key, id: id });
	check(!r.isError && r.structuredContent.closed === id, 'term_close',
	    r.structuredContent);

	// Bad arguments: answered, never a crash.
	r = await call(client, 'term_read', { key: key, id: id });
	check(r.isError && r.structuredContent.error.code === 'no-terminal',
	    'term_read of a closed id: isError', r.structuredContent);
	r = await call(client, 'term_read', { key: key, id: 4000000 });
	check(r.isError && r.structuredContent.error.code === 'no-terminal',
	    'term_read of an unknown id: isError', r.structuredContent);
	await refused(client, 'term_read', { key: key, id: 1,
	    wait_ms: 99999999 }, -32602, 'term_read with a huge wait_ms');
	await refused(client, 'term_read', { id: 1 }, -32602,
	    'term_read with no key');
	await refused(client, 'term_write', { key: key, id: -1, input: 'x' },
	    -32602, 'term_write with id -1');
	await refused(client, 'term_open', { key: key, cols: 5000 }, -32602,
	    'term_open with 5000 columns');
	await refused(client, 'port_open', { key: key, port: 70000 }, -32602,
	    'port_open of port 70000');
	await refused(client, 'port_open', { port: 8000 }, -32602,
	    'port_open with no key');
	r = await call(client, 'term_open', { key: 'no-such-fence' });
	check(r.isError && r.structuredContent.error.code === 'not-found',
	    'term_open in no fence: isError', r.structuredContent);

	// More than fence-mcp keeps between two reads: the oldest dropped,
	// counted, the newest kept.
	r = await call(client, 'term_open', { key: key, command:
	    'head -c 300000 /dev/zero | tr "\\0" x; echo; echo END; ' +
	    'exec sleep 60' });
	check(!r.isError, 'term_open a flood', r.structuredContent);
	const id3 = r.structuredContent.terminal.id;
	await new Promise((res) => setTimeout(res, 1500));
	r = await call(client, 'term_read', { key: key, id: id3 });
	const fl = r.structuredContent.terminal;
	check(!r.isError && fl.dropped > 0 && fl.output.length <= 65536 &&
	    /END\r?\n$/.test(fl.output) && fl.output.length +
	    fl.dropped >= 300000, 'a flood: bounded, the oldest dropped',
	    [fl.dropped, fl.output.length, fl.output.slice(-16)]);
	r = await call(client, 'term_close', { key: key, id: id3 });
	check(!r.isError, 'term_close of the flood', r.structuredContent);

	// A terminal whose fence stops reports ended.
	r = await call(client, 'term_open', { key: key,
	    command: 'echo ready; exec sleep 60' });
	check(!r.isError, 'term_open sleep', r.structuredContent);
	const id2 = r.structuredContent.terminal.id;
	await readUntil(client, key, id2, (s) => /ready/.test(s), 'ready');
	r = await call(client, 'stop', { key: key });
	check(!r.isError, 'stop', r.structuredContent);
	[, end] = await readUntil(client, key, id2, (s, t2) => t2.ended,
	    'ended with its fence');
	check(end.structuredContent.terminal.why === 'fence-stopped',
	    'the fence stopped: why', end.structuredContent.terminal);
	r = await call(client, 'term_close', { key: key, id: id2 });
	check(!r.isError, 'term_close of one whose fence stopped',
	    r.structuredContent);
	await client.ping();
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
	if (which === 'live') {
		await live(client);
		await client.close();
		return;
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
	await refused(client, 'boot', { key: key, require: 'L5' }, -32602,
	    'boot requiring no level there is');
	await refused(client, 'boot', { key: key, require: 'L4+runsc',
	    inner: 'none' }, -32602, 'require L4+runsc with inner none');
	/* L4+runsc asks the inner boundary, which a native fence has not. */
	r = await call(client, 'boot', { key: key + '-in', require: 'L4+runsc' });
	check(r.isError && r.structuredContent.error.code === 'inner-needs-vm',
	    'require L4+runsc of a native fence: inner-needs-vm',
	    r.structuredContent);
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
