/*
 * fenced's status page (docs/page.md).  Plain JavaScript, no library.
 * Everything it shows that came from the daemon (and so perhaps from a
 * fence: keys, violations, kernel names, output) is set as text
 * (textContent, text nodes), never parsed as HTML.
 */
"use strict";

(function () {
	const TOKEN_KEY = "fenced.token";
	const TOKEN_HEADER = "x-voicebox-host-token";
	const API = "/api/environments";
	const POLL_MS = 2000;
	const KEY_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;
	const TOKEN_RE = /^[0-9a-f]{64}$/;
	const AXES = ["filesystem", "processes", "privileges", "network",
	    "kernel"];
	const LEVELS = ["L1", "L1.5", "L2", "L3", "L4", "unmeasured",
	    "not-earned"];
	const VERDICTS = ["fenced", "passes", "not-fenced", "shared",
	    "separate", "not measured", "allowlisted"];
	const STEPS = [
		["namespacesUs", "namespaces"],
		["mountsUs", "mounts"],
		["cgroupUs", "cgroup"],
		["seccompUs", "seccomp"],
		["execUs", "exec"],
		["takeUs", "pool take"],
		["probeUs", "probe"],
		["agentReadyUs", "agent ready"]
	];

	let token = null;
	let pollTimer = null;
	let polling = false;
	/* Does the daemon stream exec output?  Until it says it does not. */
	let canStream = true;
	const cards = new Map();	/* key -> card */

	function $(id) {
		return document.getElementById(id);
	}

	/* An element of tag and class with text (as text). */
	function el(tag, cls, text) {
		const e = document.createElement(tag);

		if (cls)
			e.className = cls;
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function str(v) {
		return typeof v === "string" ? v : "";
	}

	/* A class name of a value from a closed list, never the value. */
	function classOf(prefix, list, v) {
		const i = list.indexOf(v);

		return prefix + (i < 0 ? "other" : String(i));
	}

	/* --- Talking to the daemon. */

	class ApiError extends Error {
		constructor(status, code, message, body) {
			super(message);
			this.status = status;
			this.code = code;
			this.body = body;
		}
	}

	function fetchApi(method, path, body, signal) {
		const init = {
			method: method,
			headers: {},
			cache: "no-store",
			credentials: "omit",
			redirect: "error",
			referrerPolicy: "no-referrer",
			signal: signal
		};

		init.headers[TOKEN_HEADER] = token || "";
		if (body !== undefined) {
			init.headers["Content-Type"] = "application/json";
			init.body = JSON.stringify(body);
		}
		return fetch(path, init);
	}

	async function readJson(res) {
		let text, body = null;

		text = await res.text();
		try {
			body = JSON.parse(text);
		} catch (e) {
			body = null;
		}
		if (res.ok && body !== null && typeof body === "object")
			return body;
		if (body !== null && typeof body === "object")
			throw new ApiError(res.status, str(body.error),
			    str(body.message), body);
		throw new ApiError(res.status, "bad-answer", "HTTP " +
		    res.status + ": not a JSON answer", null);
	}

	async function call(method, path, body) {
		const res = await fetchApi(method, path, body);

		if (res.status === 401)
			tokenRefused();
		return readJson(res);
	}

	function errorText(e) {
		if (e instanceof ApiError)
			return (e.code ? e.code + " (" + e.status + "): " :
			    "HTTP " + e.status + ": ") + e.message;
		return "cannot reach fenced: " + (e && e.message ?
		    e.message : String(e));
	}

	function envPath(key) {
		return API + "/" + encodeURIComponent(key);
	}

	/* --- The token. */

	function showLogin(message) {
		stopPolling();
		$("app").hidden = true;
		$("forget").hidden = true;
		$("login").hidden = false;
		$("login-error").textContent = message || "";
		$("conn").textContent = "";
		$("token").focus();
	}

	function showApp() {
		$("login").hidden = true;
		$("app").hidden = false;
		$("forget").hidden = false;
	}

	function tokenRefused() {
		token = null;
		sessionStorage.removeItem(TOKEN_KEY);
		clearCards();
		showLogin("fenced did not take this token (it may have " +
		    "been replaced with fencectl token -r).");
	}

	async function useToken(ev) {
		ev.preventDefault();
		const t = $("token").value.trim();

		if (!TOKEN_RE.test(t)) {
			$("login-error").textContent = "A host token is 64 " +
			    "lowercase hexadecimal digits.";
			return;
		}
		token = t;
		$("login-error").textContent = "";
		try {
			const list = await call("GET", API);

			if (token === null)
				return;		/* refused: said so */
			$("token").value = "";
			sessionStorage.setItem(TOKEN_KEY, t);
			showApp();
			render(list);
			schedulePoll();
		} catch (e) {
			if (token !== null) {
				token = null;
				$("login-error").textContent = errorText(e);
			}
		}
	}

	function forget() {
		token = null;
		sessionStorage.removeItem(TOKEN_KEY);
		clearCards();
		showLogin("");
	}

	/* --- Refreshing. */

	function stopPolling() {
		if (pollTimer !== null)
			clearTimeout(pollTimer);
		pollTimer = null;
	}

	function schedulePoll() {
		stopPolling();
		pollTimer = setTimeout(poll, POLL_MS);
	}

	async function poll() {
		pollTimer = null;
		if (token === null || polling)
			return;
		polling = true;
		try {
			render(await call("GET", API));
		} catch (e) {
			if (token !== null)
				setConn(errorText(e), true);
		}
		polling = false;
		if (token !== null)
			schedulePoll();
	}

	async function refreshNow() {
		if (token === null)
			return;
		stopPolling();
		await poll();
	}

	function setConn(text, bad) {
		const c = $("conn");

		c.textContent = text;
		c.classList.toggle("bad", !!bad);
	}

	/* --- Rendering. */

	function clearCards() {
		cards.forEach(function (c) {
			if (c.abort)
				c.abort.abort();
			c.root.remove();
		});
		cards.clear();
	}

	function render(list) {
		const envs = Array.isArray(list.environments) ?
		    list.environments : [];
		const box = $("envs");
		const seen = new Set();
		let prev = null;

		envs.forEach(function (env) {
			if (env === null || typeof env !== "object" ||
			    typeof env.key !== "string")
				return;
			let c = cards.get(env.key);

			if (c === undefined) {
				c = makeCard(env.key);
				cards.set(env.key, c);
			}
			if (seen.has(env.key))
				return;
			seen.add(env.key);
			updateCard(c, env);
			/* In the list's order, moving only what moved. */
			const want = prev === null ? box.firstChild :
			    prev.nextSibling;
			if (want !== c.root)
				box.insertBefore(c.root, want);
			prev = c.root;
		});
		cards.forEach(function (c, key) {
			if (!seen.has(key) && !c.running) {
				c.root.remove();
				cards.delete(key);
			}
		});
		$("empty").hidden = cards.size > 0;
		setConn("updated " + new Date().toLocaleTimeString(), false);
	}

	function makeCard(key) {
		const t = $("env-template").content.firstElementChild;
		const root = t.cloneNode(true);
		const q = function (s) {
			return root.querySelector(s);
		};
		const c = {
			key: key,
			root: root,
			env: null,
			boundaryText: null,
			timingsText: null,
			running: false,
			abort: null,
			keyEl: q(".env-key"),
			level: q(".level"),
			state: q(".state"),
			tier: q(".env-tier"),
			backend: q(".env-backend"),
			deadline: q(".deadline"),
			stop: q(".stop"),
			error: q(".env-error"),
			note: q(".boundary-note"),
			axes: q(".axes tbody"),
			kernel: q(".kernel"),
			timings: q(".timings tbody"),
			facts: q(".facts"),
			form: q(".exec"),
			command: q(".exec-command"),
			run: q(".exec-run"),
			outBox: q(".exec-out"),
			status: q(".exec-status"),
			output: q(".output")
		};

		root.dataset.key = key;
		c.keyEl.textContent = key;
		c.stop.addEventListener("click", function () {
			stopEnv(c);
		});
		c.form.addEventListener("submit", function (ev) {
			ev.preventDefault();
			if (c.running) {
				if (c.abort)
					c.abort.abort();
				return;
			}
			runCommand(c, c.command.value);
		});
		return c;
	}

	function updateCard(c, env) {
		const running = env.state === "running";
		const level = str(env.level) || "unmeasured";

		c.env = env;
		c.root.classList.toggle("stopped", !running);
		c.level.textContent = level;
		c.level.className = "badge level " +
		    classOf("lv", LEVELS, level);
		c.state.textContent = str(env.state) +
		    (env.reason ? " (" + str(env.reason) + ")" : "");
		c.state.className = "badge state " + (running ? "st-running" :
		    "st-other");
		c.tier.textContent = "tier " + str(env.tier);
		c.backend.textContent = str(env.backend) +
		    (env.accel ? " (" + str(env.accel) + ")" : "");
		c.stop.disabled = !running || c.stopping === true;
		c.run.disabled = !running && !c.running;
		c.command.disabled = !running;
		tickDeadline(c);

		const b = JSON.stringify(env.boundary === undefined ? null :
		    env.boundary);
		if (b !== c.boundaryText) {
			c.boundaryText = b;
			renderBoundary(c, env.boundary);
		}
		const t = JSON.stringify([env.timings, env.limits, env.home,
		    env.homeUsed, env.homeLimit, env.started, env.pooled,
		    env.owner]);
		if (t !== c.timingsText) {
			c.timingsText = t;
			renderTimings(c, env);
			renderFacts(c, env);
		}
	}

	function renderBoundary(c, bd) {
		c.axes.replaceChildren();
		c.kernel.textContent = "";
		c.axes.parentElement.hidden = bd === null ||
		    typeof bd !== "object";
		if (bd === null || typeof bd !== "object") {
			c.note.textContent = c.env && c.env.state !==
			    "running" ? "Stopped: its verdicts are not kept." :
			    "Not measured yet: the probe runs once the " +
			    "fence is up.";
			return;
		}
		c.note.textContent = "Measured" + (bd.when ? " " +
		    str(bd.when) : "") + " by the " + (str(bd.measuredBy) ||
		    "probe") + (bd.reason ? ": " + str(bd.reason) : "") + ".";
		const axes = bd.axes && typeof bd.axes === "object" ?
		    bd.axes : {};
		const names = AXES.slice();
		Object.keys(axes).forEach(function (k) {
			if (names.indexOf(k) < 0)
				names.push(k);
		});
		names.forEach(function (name) {
			const a = axes[name];
			const tr = el("tr");
			const verdict = a && typeof a === "object" ?
			    str(a.verdict) : "";
			const vtd = el("td");
			const list = el("td", "violations");

			tr.append(el("th", null, name));
			vtd.append(el("span", "verdict " + classOf("vd",
			    VERDICTS, verdict), verdict || "missing"));
			tr.append(vtd);
			const vs = a && Array.isArray(a.violations) ?
			    a.violations : [];
			if (vs.length > 0) {
				const ul = el("ul");
				vs.forEach(function (v) {
					ul.append(el("li", null, str(v)));
				});
				list.append(ul);
			} else if (a && a.reason) {
				list.append(el("span", "muted", str(a.reason)));
			} else if (a && a.home) {
				list.append(el("span", "muted", "home: " +
				    str(a.home)));
			} else {
				list.append(el("span", "muted", "none"));
			}
			tr.append(list);
			c.axes.append(tr);
		});
		const k = bd.kernel && typeof bd.kernel === "object" ?
		    bd.kernel : null;
		if (k && (k.release || k.version))
			c.kernel.textContent = "Kernel inside: " +
			    str(k.release) + " " + str(k.version);
	}

	function ms(us) {
		return (us / 1000).toFixed(us < 10000 ? 2 : 1) + " ms";
	}

	function renderTimings(c, env) {
		const t = env.timings && typeof env.timings === "object" ?
		    env.timings : {};
		let max = 0;

		c.timings.replaceChildren();
		STEPS.forEach(function (s) {
			if (typeof t[s[0]] === "number" && t[s[0]] > max)
				max = t[s[0]];
		});
		STEPS.forEach(function (s) {
			const v = t[s[0]];

			if (typeof v !== "number")
				return;
			const tr = el("tr", s[0] === "agentReadyUs" ?
			    "total" : null);
			const bar = el("span", "bar");
			const td = el("td", "bar-cell");

			bar.style.width = (max > 0 ? Math.max(1,
			    Math.round(v * 100 / max)) : 0) + "%";
			td.append(bar);
			tr.append(el("th", null, s[1]), td,
			    el("td", "num", ms(v)));
			c.timings.append(tr);
		});
	}

	function bytes(n) {
		if (typeof n !== "number")
			return "";
		if (n >= 1 << 30)
			return (n / (1 << 30)).toFixed(1) + " GiB";
		if (n >= 1 << 20)
			return (n / (1 << 20)).toFixed(0) + " MiB";
		if (n >= 1 << 10)
			return (n / (1 << 10)).toFixed(0) + " KiB";
		return n + " B";
	}

	function renderFacts(c, env) {
		const l = env.limits && typeof env.limits === "object" ?
		    env.limits : {};
		const rows = [
			["home", str(env.home)],
			["home used", env.homeLimit ? bytes(env.homeUsed) +
			    " of " + bytes(env.homeLimit) :
			    bytes(env.homeUsed)],
			["limits", bytes(l.memory) + ", " + String(l.pids) +
			    " pids, " + String(l.cpu) + " cpu"],
			["started", str(env.started)],
			["owner", "uid " + String(env.owner) +
			    (env.pooled ? ", from the pool" : "")]
		];

		c.facts.replaceChildren();
		rows.forEach(function (r) {
			c.facts.append(el("dt", null, r[0]),
			    el("dd", null, r[1]));
		});
	}

	function tickDeadline(c) {
		const env = c.env;

		if (env === null)
			return;
		if (env.state !== "running") {
			c.deadline.textContent = "";
			return;
		}
		const d = Date.parse(str(env.deadline));
		if (isNaN(d)) {
			c.deadline.textContent = "no deadline";
			return;
		}
		let s = Math.round((d - Date.now()) / 1000);
		if (s <= 0) {
			c.deadline.textContent = "deadline passed";
			return;
		}
		const h = Math.floor(s / 3600);
		const m = Math.floor(s % 3600 / 60);
		s %= 60;
		c.deadline.textContent = (h > 0 ? h + " h " : "") +
		    (h > 0 || m > 0 ? m + " min " : "") + s + " s left";
	}

	/* --- Boot and stop. */

	async function boot(ev) {
		ev.preventDefault();
		const key = $("boot-key").value.trim();
		const out = $("boot-error");
		const body = {};
		const button = $("boot");

		if (!KEY_RE.test(key)) {
			out.textContent = "\u201c" + key + "\u201d is not a " +
			    "key: 1 to 63 of a-z, 0-9, _ and -, the first a " +
			    "letter or digit.";
			return;
		}
		if ($("boot-tier").value)
			body.tier = $("boot-tier").value;
		if ($("boot-backend").value)
			body.backend = $("boot-backend").value;
		if ($("boot-require").value)
			body.require = $("boot-require").value;
		if ($("boot-lifetime").value)
			body.lifetime = Number($("boot-lifetime").value);
		out.textContent = "";
		button.disabled = true;
		button.textContent = body.require ? "Booting and measuring\u2026" :
		    "Booting\u2026";
		try {
			await call("POST", envPath(key), body);
			$("boot-key").value = "";
		} catch (e) {
			if (token !== null)
				out.textContent = errorText(e);
		}
		button.disabled = false;
		button.textContent = "Boot";
		await refreshNow();
	}

	async function stopEnv(c) {
		c.stopping = true;
		c.stop.disabled = true;
		c.stop.textContent = "Stopping\u2026";
		c.error.textContent = "";
		try {
			await call("DELETE", envPath(c.key));
		} catch (e) {
			if (token !== null)
				c.error.textContent = errorText(e);
		}
		c.stopping = false;
		c.stop.textContent = "Stop";
		await refreshNow();
	}

	/* --- Commands, their output streamed. */

	/* The bytes of a chunk: base64 or UTF-8 text. */
	function chunkBytes(data, encoding) {
		if (encoding === "base64") {
			const bin = atob(data);
			const b = new Uint8Array(bin.length);

			for (let i = 0; i < bin.length; i++)
				b[i] = bin.charCodeAt(i);
			return b;
		}
		return new TextEncoder().encode(data);
	}

	/* What a command printed, stdout and stderr as they came. */
	class Output {
		constructor(pre) {
			this.pre = pre;
			this.dec = {
				stdout: new TextDecoder("utf-8"),
				stderr: new TextDecoder("utf-8")
			};
			this.text = { stdout: "", stderr: "" };
			this.chunks = 0;
			pre.replaceChildren();
		}

		add(stream, bytes, final) {
			const s = this.dec[stream].decode(bytes,
			    { stream: !final });

			this.text[stream] += s;
			if (s === "")
				return;
			this.chunks++;
			const last = this.pre.lastChild;
			if (last !== null && last.dataset.stream === stream)
				last.textContent += s;
			else {
				const span = el("span", stream === "stderr" ?
				    "err" : "out", s);

				span.dataset.stream = stream;
				this.pre.append(span);
			}
			this.pre.scrollTop = this.pre.scrollHeight;
		}

		flush() {
			this.add("stdout", new Uint8Array(0), true);
			this.add("stderr", new Uint8Array(0), true);
		}

		/*
		 * The final answer carries the whole output: show it
		 * instead when it is not what the chunks made (no chunks
		 * came: a daemon that does not stream).
		 */
		settle(r) {
			if (r === null || typeof r !== "object" ||
			    (typeof r.stdout !== "string" &&
			    typeof r.stderr !== "string"))
				return;
			const enc = r.encoding === "base64" ? "base64" :
			    "utf-8";
			const dec = function (s) {
				return new TextDecoder("utf-8").decode(
				    chunkBytes(str(s), enc));
			};
			const out = dec(r.stdout), err = dec(r.stderr);
			if (out === this.text.stdout &&
			    err === this.text.stderr)
				return;
			this.pre.replaceChildren();
			this.text = { stdout: "", stderr: "" };
			this.dec.stdout = new TextDecoder("utf-8");
			this.dec.stderr = new TextDecoder("utf-8");
			this.add("stdout", chunkBytes(str(r.stdout), enc),
			    true);
			this.add("stderr", chunkBytes(str(r.stderr), enc),
			    true);
		}
	}

	/*
	 * Server-sent events (text/event-stream): lines "event: NAME" and
	 * "data: TEXT", a blank line ends an event; ":" lines are
	 * comments.  onEvent(name, data) for each.
	 */
	class EventReader {
		constructor(onEvent) {
			this.onEvent = onEvent;
			this.buf = "";
			this.name = "";
			this.data = [];
		}

		push(text, done) {
			let i;

			this.buf += text;
			while ((i = this.buf.search(/[\r\n]/)) >= 0) {
				if (this.buf[i] === "\r" &&
				    i + 1 === this.buf.length && !done)
					break;	/* a \n may follow */
				const line = this.buf.slice(0, i);
				const skip = this.buf[i] === "\r" &&
				    this.buf[i + 1] === "\n" ? 2 : 1;

				this.buf = this.buf.slice(i + skip);
				this.line(line);
			}
			if (done) {
				if (this.buf !== "")
					this.line(this.buf);
				this.buf = "";
				this.line("");
			}
		}

		line(line) {
			if (line === "") {
				if (this.data.length > 0)
					this.onEvent(this.name || "message",
					    this.data.join("\n"));
				this.name = "";
				this.data = [];
				return;
			}
			if (line[0] === ":")
				return;
			const c = line.indexOf(":");
			const field = c < 0 ? line : line.slice(0, c);
			let value = c < 0 ? "" : line.slice(c + 1);

			if (value[0] === " ")
				value = value.slice(1);
			if (field === "event")
				this.name = value;
			else if (field === "data")
				this.data.push(value);
		}
	}

	function resultText(r) {
		const parts = [];

		if (r.exitCode !== null && r.exitCode !== undefined)
			parts.push("exit " + String(r.exitCode));
		else if (r.signal !== null && r.signal !== undefined)
			parts.push("killed by signal " + String(r.signal));
		if (typeof r.durationMs === "number")
			parts.push(r.durationMs + " ms");
		if (r.truncated)
			parts.push("output truncated");
		return parts.join(" \u00b7 ");
	}

	function execStarted(c, command) {
		c.running = true;
		c.abort = new AbortController();
		c.outBox.hidden = false;
		c.root.classList.add("busy");
		c.status.className = "exec-status muted";
		c.status.textContent = "running " + command;
		c.run.textContent = "Cancel";
		c.run.disabled = false;
		c.output.dataset.state = "running";
		return new Output(c.output);
	}

	function execEnded(c, text, bad) {
		c.running = false;
		c.abort = null;
		c.root.classList.remove("busy");
		c.status.textContent = text;
		c.status.className = "exec-status " + (bad ? "error" : "muted");
		c.run.textContent = "Run";
		c.run.disabled = !(c.env && c.env.state === "running");
		c.output.dataset.state = bad ? "failed" : "done";
	}

	async function readStream(res, out) {
		let final = null;
		const reader = res.body.getReader();
		const dec = new TextDecoder("utf-8");
		const events = new EventReader(function (name, data) {
			let d;

			try {
				d = JSON.parse(data);
			} catch (e) {
				return;
			}
			if (d === null || typeof d !== "object")
				return;
			if ((name === "stdout" || name === "stderr") &&
			    typeof d.data === "string")
				out.add(name, chunkBytes(d.data, d.encoding),
				    false);
			else if (name === "result" || name === "error")
				final = { name: name, data: d };
		});

		for (;;) {
			const r = await reader.read();

			if (r.done) {
				events.push(dec.decode(), true);
				break;
			}
			events.push(dec.decode(r.value, { stream: true }),
			    false);
		}
		out.flush();
		return final;
	}

	async function runCommand(c, command) {
		if (command.trim() === "")
			return;
		const out = execStarted(c, command);
		const path = envPath(c.key) + "/exec";
		let res;

		try {
			res = await fetchApi("POST", path, canStream ?
			    { command: command, stream: true } :
			    { command: command }, c.abort.signal);
			if (canStream && res.status === 400) {
				/* A daemon without streaming refuses the field. */
				const body = await res.clone().json().catch(
				    function () { return null; });
				if (body && body.error === "unknown-field" &&
				    /stream/.test(str(body.message))) {
					canStream = false;
					res = await fetchApi("POST", path,
					    { command: command },
					    c.abort.signal);
				}
			}
			if (res.status === 401) {
				tokenRefused();
				return;
			}
			const type = res.headers.get("Content-Type") || "";
			if (res.ok && /^text\/event-stream/i.test(type)) {
				const f = await readStream(res, out);

				if (f === null)
					execEnded(c, "the stream ended " +
					    "without a result", true);
				else if (f.name === "result") {
					out.settle(f.data);
					execEnded(c, resultText(f.data), false);
				} else {
					out.settle(f.data);
					execEnded(c, errorText(new ApiError(
					    Number(f.data.status) || 500,
					    str(f.data.error),
					    str(f.data.message), f.data)),
					    true);
				}
				return;
			}
			try {
				const r = await readJson(res);

				out.settle(r);
				execEnded(c, resultText(r), false);
			} catch (e) {
				if (e instanceof ApiError && e.body)
					out.settle(e.body);
				execEnded(c, errorText(e), true);
			}
		} catch (e) {
			out.flush();
			execEnded(c, e && e.name === "AbortError" ?
			    "cancelled: the command was killed" :
			    errorText(e), true);
		}
	}

	/* --- Start. */

	function start() {
		$("token-form").addEventListener("submit", useToken);
		$("forget").addEventListener("click", forget);
		$("boot-form").addEventListener("submit", boot);
		setInterval(function () {
			cards.forEach(tickDeadline);
		}, 1000);
		const t = sessionStorage.getItem(TOKEN_KEY);
		if (t !== null && TOKEN_RE.test(t)) {
			token = t;
			showApp();
			poll();
		} else
			showLogin("");
	}

	if (document.readyState === "loading")
		document.addEventListener("DOMContentLoaded", start);
	else
		start();
})();
