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
	    "kernel", "surface"];
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
	/*
	 * The steps only the native backend times (fencer/native): on
	 * another backend, or where a tier skips one, they come as 0.
	 * takeUs is null when the fence was not taken from the pool (the
	 * step did not happen, so it has no row).
	 */
	const NATIVE_STEPS = ["namespacesUs", "mountsUs", "cgroupUs",
	    "seccompUs"];
	/* Folded: the states of a fence that is over. */
	const OVER = ["stopped", "failed"];

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
			partsEnd(c);
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
				partsEnd(c);
				c.root.remove();
				cards.delete(key);
			}
		});
		$("empty").hidden = cards.size > 0;
		setConn("updated " + when(Date.now() / 1000), false);
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
			over: null,
			running: false,
			abort: null,
			keyEl: q(".env-key"),
			fold: q(".env-fold"),
			foldSum: q(".fold-sum"),
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
		partsMake(c);
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
		foldCard(c, OVER.indexOf(env.state) >= 0);
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
		partsUpdate(c);

		const b = JSON.stringify(env.boundary === undefined ? null :
		    env.boundary);
		if (b !== c.boundaryText) {
			c.boundaryText = b;
			renderBoundary(c, env.boundary);
		}
		const t = JSON.stringify([env.timings, env.limits, env.home,
		    env.homeUsed, env.homeLimit, env.started, env.pooled,
		    env.owner, env.ownerName]);
		if (t !== c.timingsText) {
			c.timingsText = t;
			renderTimings(c, env);
			renderFacts(c, env);
		}
	}

	/*
	 * A fence that is over folds up when it comes to be (or first
	 * shows) so; opened by hand it stays open.  One that runs again
	 * (a key booted anew) opens.
	 */
	function foldCard(c, over) {
		if (c.over !== over)
			c.fold.open = !over;
		c.over = over;
		c.foldSum.textContent = over ? "Stopped: its boundary, " +
		    "timings and files" : "Boundary, boot, command, terminal, " +
		    "files, processes, ports";
	}

	/*
	 * One time format everywhere: local "YYYY-MM-DD HH:MM:SS", from
	 * epoch seconds or an ISO 8601 string of the daemon.  Anything
	 * else is shown as the text it is.
	 */
	function when(t) {
		const d = typeof t === "number" ? new Date(t * 1000) :
		    typeof t === "string" && /^\d{4}-\d\d-\d\dT/.test(t) ?
		    new Date(t) : null;
		const two = function (n) {
			return (n < 10 ? "0" : "") + String(n);
		};

		if (d === null || isNaN(d.getTime()))
			return str(t);
		return d.getFullYear() + "-" + two(d.getMonth() + 1) + "-" +
		    two(d.getDate()) + " " + two(d.getHours()) + ":" +
		    two(d.getMinutes()) + ":" + two(d.getSeconds());
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
		    when(bd.when) : "") + " by the " + (str(bd.measuredBy) ||
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
			} else if (a && Array.isArray(a.reachable)) {
				/* The kernel's entries reached, and whose. */
				list.append(el("span", "muted", "reachable (" +
				    str(a.kernel) + " kernel): " +
				    (a.reachable.length > 0 ?
				    a.reachable.map(str).join(" ") : "none")));
			} else {
				list.append(el("span", "muted", "none"));
			}
			tr.append(list);
			c.axes.append(tr);
		});
		const k = bd.kernel && typeof bd.kernel === "object" ?
		    bd.kernel : null;
		/* A vm fence's layer inside: both kernels, in a line. */
		const inn = bd.inner && typeof bd.inner === "object" ?
		    bd.inner : null;
		if (k && (k.release || k.version))
			c.kernel.textContent = "Kernel inside: " +
			    str(k.release) + " " + str(k.version) +
			    (inn ? (inn.verdict === "separate" ?
			    " (gVisor's sentry, inside the guest's kernel)" :
			    " (inner layer " + str(inn.verdict) + ": " +
			    str(inn.reason) + ")") : "");
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
			const unmeasured = v === 0 || (v === null &&
			    s[0] === "probeUs") || (env.backend !== "native" &&
			    NATIVE_STEPS.indexOf(s[0]) >= 0);

			if (typeof v !== "number" && !unmeasured)
				return;
			const tr = el("tr", s[0] === "agentReadyUs" ?
			    "total" : null);
			const bar = el("span", "bar");
			const td = el("td", "bar-cell");

			tr.append(el("th", null, s[1]));
			if (unmeasured) {
				tr.classList.add("unmeasured");
				tr.title = "the " + str(env.backend) +
				    " backend does not time this step here";
				tr.append(td, el("td", "num muted",
				    "not measured"));
				c.timings.append(tr);
				return;
			}
			bar.style.width = (max > 0 ? Math.max(1,
			    Math.round(v * 100 / max)) : 0) + "%";
			td.append(bar);
			tr.append(td, el("td", "num", ms(v)));
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
			["started", when(env.started)],
			/*
			 * The name the host gave at boot (docs/page.md), set
			 * as text by el(), never as markup.
			 */
			["owner", (str(env.ownerName) !== "" ?
			    str(env.ownerName) + " (uid " + String(env.owner) +
			    ")" : "uid " + String(env.owner)) +
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
		c.deadline.title = "time left before the deadline, " +
		    when(env.deadline);
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

		/*
		 * What the command was refused (docs/denials.md), under its
		 * output: one line each, as fencectl prints them.
		 */
		denials(r) {
			if (r === null || typeof r !== "object")
				return;
			const list = Array.isArray(r.denials) ? r.denials : [];
			for (const d of list) {
				if (d === null || typeof d !== "object")
					continue;
				let line = "denied: " + str(d.layer) + ": " +
				    str(d.what) + " x" + String(Number(d.count) ||
				    0);
				if (typeof d.remedy === "string" && d.remedy)
					line += " - " + d.remedy;
				this.pre.append(el("span", "denied", line + "\n"));
			}
			if (typeof r.denialsDropped === "number" &&
			    r.denialsDropped > 0)
				this.pre.append(el("span", "denied", "denied: " +
				    String(r.denialsDropped) + " more not listed\n"));
			if (typeof r.denialsNote === "string" && r.denialsNote)
				this.pre.append(el("span", "denied muted",
				    r.denialsNote + "\n"));
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
					out.denials(f.data);
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
				out.denials(r);
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

	/* --- The interactive parts of a card (docs/page.md). */

	/*
	 * A request with a body of bytes (a file), or none, answered with
	 * bytes: the files API.
	 */
	function fetchRaw(method, path, body) {
		const init = {
			method: method,
			headers: {},
			cache: "no-store",
			credentials: "omit",
			redirect: "error",
			referrerPolicy: "no-referrer"
		};

		init.headers[TOKEN_HEADER] = token || "";
		if (body !== undefined) {
			init.headers["Content-Type"] =
			    "application/octet-stream";
			init.body = body;
		}
		return fetch(path, init);
	}

	function partsMake(c) {
		const q = function (s) {
			return c.root.querySelector(s);
		};

		c.files = {
			part: q(".files-part"),
			dir: [],
			path: q(".files-path"),
			up: q(".files-up"),
			upload: q(".files-upload"),
			refresh: q(".files-refresh"),
			error: q(".files-error"),
			body: q(".files tbody")
		};
		c.procs = {
			part: q(".procs-part"),
			form: q(".proc-start"),
			command: q(".proc-command"),
			stdin: q(".proc-stdin"),
			error: q(".procs-error"),
			box: q(".procs"),
			shown: new Map(),	/* id -> process view */
			timer: null,
			busy: false
		};
		c.ports = {
			part: q(".ports-part"),
			error: q(".ports-error"),
			list: q(".ports"),
			text: null,
			timer: null
		};
		c.files.part.addEventListener("toggle", function () {
			if (c.files.part.open)
				filesLoad(c);
		});
		c.files.up.addEventListener("click", function () {
			c.files.dir.pop();
			filesLoad(c);
		});
		c.files.refresh.addEventListener("click", function () {
			filesLoad(c);
		});
		c.files.upload.addEventListener("change", function () {
			filesUpload(c);
		});
		c.procs.part.addEventListener("toggle", function () {
			procsTick(c);
		});
		c.procs.form.addEventListener("submit", function (ev) {
			ev.preventDefault();
			procStart(c);
		});
		c.ports.part.addEventListener("toggle", function () {
			portsTick(c);
		});
		termMake(c);
	}

	/* Called with every state of the card's fence. */
	function partsUpdate(c) {
		const running = c.env !== null && c.env.state === "running";

		c.procs.command.disabled = !running;
		c.files.upload.disabled = !running;
		termUpdate(c, running);
	}

	/* The card goes: nothing of it may go on. */
	function partsEnd(c) {
		if (c.procs.timer !== null)
			clearTimeout(c.procs.timer);
		if (c.ports.timer !== null)
			clearTimeout(c.ports.timer);
		c.procs.timer = c.ports.timer = null;
		c.procs.shown.forEach(function (v) {
			procViewEnd(v);
		});
		termEnd(c, "");
	}

	function isRunning(c) {
		return token !== null && cards.get(c.key) === c &&
		    c.env !== null && c.env.state === "running";
	}

	/* --- Files of the home (docs/files.md). */

	function filesPath(c, name) {
		const parts = c.files.dir.slice();

		if (name !== undefined)
			parts.push(name);
		return envPath(c.key) + "/files/" +
		    parts.map(encodeURIComponent).join("/");
	}

	function modeText(e) {
		return typeof e.mode === "string" ? e.mode : "";
	}

	function timeText(t) {
		return typeof t === "number" ? when(t) : "";
	}

	async function filesLoad(c) {
		const f = c.files;

		if (!f.part.open || token === null)
			return;
		f.path.textContent = "~/" + f.dir.join("/");
		f.up.disabled = f.dir.length === 0;
		f.error.textContent = "";
		try {
			const r = await call("GET", filesPath(c));
			const entries = Array.isArray(r.entries) ?
			    r.entries.slice() : [];

			entries.sort(function (a, b) {
				const da = a.type === "directory" ? 0 : 1;
				const db = b.type === "directory" ? 0 : 1;

				if (da !== db)
					return da - db;
				return str(a.name) < str(b.name) ? -1 :
				    str(a.name) > str(b.name) ? 1 : 0;
			});
			f.body.replaceChildren();
			entries.forEach(function (e) {
				if (e === null || typeof e !== "object")
					return;
				f.body.append(fileRow(c, e));
			});
			if (r.truncated)
				f.error.textContent = "Only the first " +
				    entries.length + " entries are shown.";
			else if (entries.length === 0)
				f.error.textContent = "Empty.";
		} catch (e) {
			f.body.replaceChildren();
			if (token !== null)
				f.error.textContent = errorText(e);
		}
	}

	function fileRow(c, e) {
		const tr = el("tr");
		const name = str(e.name);
		const td = el("td");

		/* A name that is not UTF-8 cannot be named by a path. */
		if (e.encoding === "base64" || name === "")
			td.append(el("span", "muted", "(a name that is " +
			    "not UTF-8)"));
		else if (e.type === "directory" || e.type === "file") {
			const b = el("button", "link", e.type ===
			    "directory" ? name + "/" : name);

			b.type = "button";
			b.title = e.type === "directory" ? "open" :
			    "download";
			b.addEventListener("click", function () {
				if (e.type === "directory") {
					c.files.dir.push(name);
					filesLoad(c);
				} else
					fileDownload(c, name);
			});
			td.append(b);
		} else
			td.append(document.createTextNode(name));
		tr.append(td, el("td", null, str(e.type)),
		    el("td", "num", e.type === "file" ? bytes(e.size) : ""),
		    el("td", null, modeText(e)),
		    el("td", null, timeText(e.mtime)));
		return tr;
	}

	async function fileDownload(c, name) {
		const f = c.files;

		f.error.textContent = "";
		try {
			const res = await fetchRaw("GET", filesPath(c, name));

			if (res.status === 401) {
				tokenRefused();
				return;
			}
			if (!res.ok)
				await readJson(res);	/* throws its error */
			const blob = await res.blob();
			const url = URL.createObjectURL(blob);
			const a = el("a");

			a.href = url;
			a.download = name;
			a.hidden = true;
			document.body.append(a);
			a.click();
			a.remove();
			setTimeout(function () {
				URL.revokeObjectURL(url);
			}, 60000);
		} catch (e) {
			if (token !== null)
				f.error.textContent = errorText(e);
		}
	}

	async function filesUpload(c) {
		const f = c.files;
		const list = Array.from(f.upload.files || []);

		f.error.textContent = "";
		for (const file of list) {
			try {
				const res = await fetchRaw("PUT",
				    filesPath(c, file.name), file);

				if (res.status === 401) {
					tokenRefused();
					return;
				}
				await readJson(res);
			} catch (e) {
				if (token !== null)
					f.error.textContent = file.name +
					    ": " + errorText(e);
				break;
			}
		}
		f.upload.value = "";
		filesLoad(c);
	}

	/* --- Background processes (docs/http.md), output live. */

	const PROCS_MS = 2000;
	const OUTPUT_MS = 500;

	function procsTick(c) {
		const p = c.procs;

		if (p.timer !== null)
			clearTimeout(p.timer);
		p.timer = null;
		if (!p.part.open || !isRunning(c))
			return;
		procsLoad(c).finally(function () {
			if (p.part.open && isRunning(c) && p.timer === null)
				p.timer = setTimeout(function () {
					p.timer = null;
					procsTick(c);
				}, PROCS_MS);
		});
	}

	async function procsLoad(c) {
		const p = c.procs;

		if (p.busy)
			return;
		p.busy = true;
		try {
			const r = await call("GET", envPath(c.key) +
			    "/processes");
			const list = Array.isArray(r.processes) ?
			    r.processes : [];
			const seen = new Set();

			list.forEach(function (pr) {
				if (pr === null || typeof pr !== "object" ||
				    typeof pr.id !== "string")
					return;
				seen.add(pr.id);
				let v = p.shown.get(pr.id);
				if (v === undefined) {
					v = procView(c, pr.id);
					p.shown.set(pr.id, v);
					p.box.append(v.root);
				}
				procViewUpdate(c, v, pr);
			});
			p.shown.forEach(function (v, id) {
				if (!seen.has(id)) {
					procViewEnd(v);
					v.root.remove();
					p.shown.delete(id);
				}
			});
			p.error.textContent = "";
		} catch (e) {
			if (token !== null)
				p.error.textContent = errorText(e);
		}
		p.busy = false;
	}

	async function procStart(c) {
		const p = c.procs;
		const command = p.command.value;

		if (command.trim() === "")
			return;
		p.error.textContent = "";
		try {
			const body = { command: command };

			if (p.stdin.checked)
				body.stdinOpen = true;
			await call("POST", envPath(c.key) + "/processes",
			    body);
			p.command.value = "";
		} catch (e) {
			if (token !== null)
				p.error.textContent = errorText(e);
		}
		procsTick(c);
	}

	function procView(c, id) {
		const root = el("div", "proc");
		const head = el("div", "proc-head");
		const v = {
			id: id,
			root: root,
			what: el("code"),
			state: el("span", "badge"),
			signal: el("button", "quiet", "Stop"),
			forget: el("button", "quiet", "Forget"),
			pre: el("pre", "output"),
			out: null,
			offsets: { stdout: 0, stderr: 0 },
			timer: null,
			busy: false,
			live: null,
			liveOpen: 0,
			ended: false
		};

		v.signal.type = v.forget.type = "button";
		v.out = new Output(v.pre);
		v.pre.dataset.id = id;
		head.append(el("span", "muted", "#" + id), v.what, v.state,
		    v.signal, v.forget);
		/* Its stdin, when it was started with stdin open. */
		v.inRow = el("form", "proc-input");
		v.inText = el("input");
		v.inText.placeholder = "a line for its stdin";
		v.inText.maxLength = 4096;
		v.inText.spellcheck = false;
		v.inSend = el("button", null, "Send");
		v.inSend.type = "submit";
		v.inClose = el("button", "quiet", "Close stdin");
		v.inClose.type = "button";
		v.inSay = el("span", "muted");
		v.inRow.append(v.inText, v.inSend, v.inClose, v.inSay);
		root.append(head, v.pre, v.inRow);
		v.inRow.addEventListener("submit", function (ev) {
			ev.preventDefault();
			procInput(c, v, v.inText.value + "\n", false);
		});
		v.inClose.addEventListener("click", function () {
			procInput(c, v, null, true);
		});
		root.dataset.id = id;
		v.signal.addEventListener("click", function () {
			procSignal(c, v, "TERM");
		});
		v.forget.addEventListener("click", function () {
			procSignal(c, v, null);
		});
		return v;
	}

	function procViewEnd(v) {
		v.ended = true;
		if (v.live !== null)
			v.live.forEach(function (st) {
				st.close();
			});
		v.live = null;
		if (v.timer !== null)
			clearTimeout(v.timer);
		v.timer = null;
	}

	function procViewUpdate(c, v, pr) {
		const running = pr.state === "running";

		v.what.textContent = typeof pr.command === "string" ?
		    pr.command : Array.isArray(pr.argv) ?
		    pr.argv.map(str).join(" ") : "";
		v.state.textContent = running ? "running" :
		    pr.error ? str(pr.error) : resultText(pr) || "exited";
		v.state.className = "badge " + (running ? "st-running" :
		    "st-other");
		v.signal.hidden = !running;
		v.forget.hidden = running;
		v.inRow.hidden = !running;
		v.root.dataset.state = running ? "running" : "exited";
		const more = (typeof pr.stdoutBytes === "number" &&
		    pr.stdoutBytes > v.offsets.stdout) ||
		    (typeof pr.stderrBytes === "number" &&
		    pr.stderrBytes > v.offsets.stderr);
		if ((running || more) && v.timer === null && !v.busy &&
		    v.live === null)
			procLive(c, v);
	}

	/*
	 * The output live: a stream of the page's channel for stdout and
	 * one for stderr, from what the page has, until the process exited
	 * and its output was drained (the stream's end).  Without a
	 * channel, the output is asked for every OUTPUT_MS instead.
	 */
	async function procLive(c, v) {
		const names = ["stdout", "stderr"];

		v.live = [];
		v.liveOpen = 0;
		try {
			for (const which of names) {
				v.liveOpen++;
				v.live.push(await theChannel().stream({
				    op: "output", key: c.key,
				    id: Number(v.id), which: which,
				    offset: v.offsets[which] }, {
					onData: function (b) {
						v.offsets[which] += b.length;
						v.out.add(which, b, false);
					},
					onEnd: function () {
						if (--v.liveOpen === 0) {
							v.out.flush();
							v.live = null;
						}
					}
				    }));
			}
			v.pre.dataset.live = "channel";
		} catch (e) {
			v.live.forEach(function (st) {
				st.close();
			});
			v.live = null;
			v.pre.dataset.live = "polling";
			procOutput(c, v);
		}
	}

	/*
	 * The output from where the page is, until the process exited
	 * and all it kept was read.
	 */
	async function procOutput(c, v) {
		if (v.ended || !isRunning(c) || !c.procs.part.open)
			return;
		v.busy = true;
		let again = false;
		try {
			const r = await call("GET", envPath(c.key) +
			    "/processes/" + encodeURIComponent(v.id) +
			    "?stdoutOffset=" + v.offsets.stdout +
			    "&stderrOffset=" + v.offsets.stderr);
			const enc = r.encoding === "base64" ? "base64" :
			    "utf-8";
			const o = chunkBytes(str(r.stdout), enc);
			const e = chunkBytes(str(r.stderr), enc);

			if (!v.ended) {
				v.offsets.stdout += o.length;
				v.offsets.stderr += e.length;
				v.out.add("stdout", o, false);
				v.out.add("stderr", e, false);
				again = r.state === "running" ||
				    o.length > 0 || e.length > 0;
				if (!again)
					v.out.flush();
			}
		} catch (e) {
			again = false;
		}
		v.busy = false;
		if (again && !v.ended)
			v.timer = setTimeout(function () {
				v.timer = null;
				procOutput(c, v);
			}, OUTPUT_MS);
	}

	/*
	 * Bytes to a running process's stdin, or its end, as an input
	 * stream of the channel (answered once written).
	 */
	async function procInput(c, v, text, close) {
		v.inSay.textContent = "";
		try {
			const m = { op: "input", key: c.key, id: Number(v.id) };

			if (text !== null)
				m.data = text;
			if (close)
				m.close = true;
			await new Promise(function (ok, fail) {
				theChannel().stream(m, {
					onData: function () {},
					onEnd: function (why) {
						if (why)
							fail(new Error(why));
						else
							ok();
					}
				}).catch(fail);
			});
			if (text !== null)
				v.inText.value = "";
			v.inSay.textContent = close ? "stdin closed" : "sent";
		} catch (e) {
			v.inSay.textContent = e && e.message ? e.message :
			    String(e);
		}
	}

	async function procSignal(c, v, signal) {
		const p = c.procs;

		try {
			await call("DELETE", envPath(c.key) + "/processes/" +
			    encodeURIComponent(v.id) + (signal ?
			    "?signal=" + signal : ""));
		} catch (e) {
			if (token !== null)
				p.error.textContent = errorText(e);
		}
		procsTick(c);
	}

	/* --- Ports: the fence's listening ports, opened through a ticket. */

	const PORTS_MS = 3000;

	function portsTick(c) {
		const p = c.ports;

		if (p.timer !== null)
			clearTimeout(p.timer);
		p.timer = null;
		if (!p.part.open || !isRunning(c))
			return;
		portsLoad(c).finally(function () {
			if (p.part.open && isRunning(c) && p.timer === null)
				p.timer = setTimeout(function () {
					p.timer = null;
					portsTick(c);
				}, PORTS_MS);
		});
	}

	function portOf(v) {
		const n = typeof v === "number" ? v : v !== null &&
		    typeof v === "object" ? v.port : NaN;

		return Number.isInteger(n) && n > 0 && n < 65536 ? n : 0;
	}

	async function portsLoad(c) {
		const p = c.ports;

		try {
			const r = await call("GET", envPath(c.key) + "/ports");
			const list = (Array.isArray(r.ports) ? r.ports : [])
			    .map(portOf).filter(function (n) {
				return n > 0;
			    });
			const text = JSON.stringify(list);

			p.error.textContent = "";
			if (text === p.text)
				return;
			p.text = text;
			p.list.replaceChildren();
			if (list.length === 0)
				p.list.append(el("li", "muted",
				    "nothing listens on a TCP port"));
			list.forEach(function (n) {
				const li = el("li");
				const b = el("button", "link", "port " + n);

				b.type = "button";
				b.dataset.port = String(n);
				b.title = "open it in a new tab";
				b.addEventListener("click", function () {
					portOpen(c, n);
				});
				li.append(b);
				p.list.append(li);
			});
		} catch (e) {
			if (token !== null)
				p.error.textContent = errorText(e);
		}
	}

	/*
	 * A ticket, good once for a minute, makes the fence's own host
	 * name's cookie (docs/interactive.md): the tab is opened at once,
	 * in the click, so no popup blocker takes it, and sent to the
	 * ticket's address once it came.
	 */
	async function portOpen(c, port) {
		const w = window.open("", "_blank");

		if (w !== null)
			w.opener = null;
		try {
			const r = await call("POST", envPath(c.key) +
			    "/tickets", { port: port });
			const url = str(r.url);

			if (!/^https?:\/\//.test(url))
				throw new Error("no address in the answer");
			if (w !== null)
				w.location.href = url;
			else
				window.location.assign(url);
		} catch (e) {
			if (w !== null)
				w.close();
			if (token !== null)
				c.ports.error.textContent = errorText(e);
		}
	}

	/*
	 * --- The channel: one WebSocket for the page (docs/interactive.md,
	 * "The channel"), authenticated by its first message, carrying
	 * every live stream the page holds, each with its own credit.
	 */

	const CHANNEL_PATH = "/api/channel";
	const STREAM_ID_MAX = 0x7fffffff;

	/*
	 * The channel's messages (docs/interactive.md, "/api/channel"):
	 * text ones are JSON objects with an "op" and the page's "stream"
	 * number; binary ones are a stream's bytes, the stream first in 4
	 * bytes, big-endian.  Every stream's bytes are acknowledged ("ack")
	 * once shown, which is what lets the daemon send more of it.
	 */
	class Channel {
		constructor() {
			this.ws = null;
			this.opening = null;
			this.streams = new Map();	/* id -> handlers */
			this.next = 1;
		}

		open() {
			if (this.opening !== null)
				return this.opening;
			const self = this;

			this.opening = new Promise(function (ok, fail) {
				const ws = new WebSocket((location.protocol ===
				    "https:" ? "wss://" : "ws://") +
				    location.host + CHANNEL_PATH);
				let ready = false;

				self.ws = ws;
				ws.binaryType = "arraybuffer";
				ws.onopen = function () {
					ws.send(JSON.stringify({ op: "auth",
					    token: token }));
				};
				ws.onmessage = function (ev) {
					if (typeof ev.data !== "string") {
						if (ready)
							self.bytes(ev.data);
						return;
					}
					let m;

					try {
						m = JSON.parse(ev.data);
					} catch (e) {
						return;
					}
					if (m === null || typeof m !== "object")
						return;
					if (!ready && m.op === "ready") {
						ready = true;
						ok(self);
						return;
					}
					self.message(m);
				};
				ws.onclose = function (ev) {
					if (!ready)
						fail(new Error("the channel " +
						    "closed (" + ev.code +
						    (ev.reason ? ": " + ev.reason :
						    "") + ")"));
					self.closed(ev.code, ev.reason);
				};
			});
			return this.opening;
		}

		closed(code, reason) {
			const streams = this.streams;

			if (this.ws !== null)
				this.ws.onclose = null;
			this.ws = null;
			this.opening = null;
			this.streams = new Map();
			streams.forEach(function (h) {
				h.onEnd("the channel closed (" + code +
				    (reason ? ": " + reason : "") + ")");
			});
		}

		bytes(buf) {
			if (!(buf instanceof ArrayBuffer) || buf.byteLength < 4)
				return;
			const id = new DataView(buf).getUint32(0);
			const h = this.streams.get(id);
			const b = new Uint8Array(buf, 4);

			if (h === undefined)
				return;
			h.onData(b);
			if (b.length > 0)
				this.send({ op: "ack", stream: id,
				    bytes: b.length });
		}

		message(m) {
			const h = this.streams.get(m.stream);

			if (h === undefined)
				return;
			if (m.op === "open" && h.onOpen)
				h.onOpen();
			else if (m.op === "end" || m.op === "closed" ||
			    m.op === "written" || m.op === "error") {
				this.streams.delete(m.stream);
				h.onEnd(m.op === "error" ? str(m.error) +
				    ": " + str(m.message) : "");
			} else if (h.onMessage)
				h.onMessage(m);
		}

		send(m) {
			if (this.ws !== null && this.ws.readyState === 1)
				this.ws.send(JSON.stringify(m));
		}

		/*
		 * A stream: spec is the op that opens it ("terminal",
		 * "output") with its fields; handlers onData(bytes),
		 * onEnd(why), and perhaps onOpen(), onMessage(m).
		 */
		async stream(spec, handlers) {
			await this.open();
			const id = this.next;
			const self = this;

			this.next = this.next >= STREAM_ID_MAX ? 1 :
			    this.next + 1;
			this.streams.set(id, handlers);
			this.send(Object.assign({ stream: id }, spec));
			return {
				id: id,
				write: function (bytes) {
					const f = new Uint8Array(4 +
					    bytes.length);

					new DataView(f.buffer).setUint32(0, id);
					f.set(bytes, 4);
					if (self.ws !== null &&
					    self.ws.readyState === 1)
						self.ws.send(f);
				},
				resize: function (cols, rows) {
					self.send({ op: "resize", stream: id,
					    cols: cols, rows: rows });
				},
				close: function () {
					if (self.streams.delete(id))
						self.send({ op: "close",
						    stream: id });
				}
			};
		}
	}

	let channel = null;

	function theChannel() {
		if (channel === null)
			channel = new Channel();
		return channel;
	}

	/* The page's one channel, for the browser tests' streams case. */
	window.fencedPage = Object.freeze({ channel: theChannel });

	/* --- A terminal per environment, in xterm.js. */

	const TERM_REPLAY = 64 * 1024;

	function termMake(c) {
		const q = function (s) {
			return c.root.querySelector(s);
		};

		c.term = {
			part: q(".term-part"),
			box: q(".term"),
			open: q(".term-open"),
			kill: q(".term-kill"),
			status: q(".term-status"),
			xterm: null,
			id: null,
			stream: null,
			observer: null,
			size: ""
		};
		c.term.box.classList.add("idle");
		c.term.open.addEventListener("click", function () {
			termOpen(c);
		});
		c.term.kill.addEventListener("click", function () {
			termKill(c);
		});
		c.term.part.addEventListener("toggle", function () {
			if (c.term.part.open && c.term.stream === null &&
			    isRunning(c))
				termFind(c);
		});
	}

	function termUpdate(c, running) {
		const t = c.term;

		t.open.disabled = !running || t.stream !== null ||
		    typeof window.Terminal !== "function";
		if (!running && t.xterm !== null)
			termEnd(c, "the environment stopped");
	}

	function termSay(c, text, bad) {
		c.term.status.textContent = text;
		c.term.status.className = "term-status " + (bad ? "error" :
		    "muted");
	}

	/* A terminal of the fence's that is there already: attach. */
	async function termFind(c) {
		try {
			const r = await call("GET", envPath(c.key) +
			    "/terminals");
			const list = Array.isArray(r.terminals) ?
			    r.terminals : [];
			const live = list.filter(function (t) {
				return t !== null && typeof t === "object" &&
				    (typeof t.id === "string" ||
				    typeof t.id === "number") &&
				    t.running !== false;
			});

			if (live.length > 0 && c.term.stream === null)
				await termAttach(c,
				    String(live[live.length - 1].id));
		} catch (e) {
			if (token !== null)
				termSay(c, errorText(e), true);
		}
	}

	function termXterm(c) {
		const t = c.term;

		if (t.xterm !== null)
			return t.xterm;
		t.box.classList.remove("idle");
		t.xterm = new window.Terminal({ cursorBlink: true,
		    rendererType: "canvas", scrollback: 2000 });
		t.xterm.open(t.box);
		t.xterm.fit();
		/* For the browser tests: what the terminal shows. */
		c.root.__term = t.xterm;
		t.xterm.on("data", function (d) {
			if (t.stream !== null)
				t.stream.write(new TextEncoder().encode(d));
		});
		t.xterm.on("resize", function (sz) {
			termResized(c, sz.cols, sz.rows);
		});
		/* The terminal's size follows its element's. */
		t.observer = new ResizeObserver(function () {
			if (t.xterm !== null)
				t.xterm.fit();
		});
		t.observer.observe(t.box);
		return t.xterm;
	}

	function termResized(c, cols, rows) {
		const t = c.term;
		const size = cols + "x" + rows;

		if (t.stream === null || size === t.size)
			return;
		t.size = size;
		t.box.dataset.size = size;
		t.stream.resize(cols, rows);
	}

	async function termOpen(c) {
		const t = c.term;

		t.open.disabled = true;
		termSay(c, "starting\u2026", false);
		try {
			const x = termXterm(c);
			const r = await call("POST", envPath(c.key) +
			    "/terminals", { cols: x.cols, rows: x.rows });

			if (typeof r.id !== "string" &&
			    typeof r.id !== "number")
				throw new Error("no terminal id in the answer");
			await termAttach(c, String(r.id));
		} catch (e) {
			if (token !== null)
				termSay(c, errorText(e), true);
			t.open.disabled = !isRunning(c);
		}
	}

	async function termAttach(c, id) {
		const t = c.term;
		const x = termXterm(c);
		const dec = new TextDecoder("utf-8");

		/* Another terminal than the one shown: a clean screen. */
		if (t.id !== null && t.id !== id)
			x.reset();
		t.id = id;
		t.box.dataset.id = id;
		termSay(c, "attaching to terminal " + id + "\u2026", false);
		t.stream = await theChannel().stream({ op: "terminal",
		    key: c.key, id: Number(id), replay: TERM_REPLAY },
		    {
			onData: function (b) {
				x.write(dec.decode(b, { stream: true }));
			},
			onEnd: function (why) {
				t.stream = null;
				t.kill.disabled = true;
				termSay(c, "terminal " + id + " ended" +
				    (why ? ": " + why : ""), why !== "");
				termUpdate(c, isRunning(c));
			}
		    });
		t.size = "";
		termResized(c, x.cols, x.rows);
		t.kill.disabled = false;
		t.open.disabled = true;
		termSay(c, "terminal " + id, false);
		x.focus();
	}

	async function termKill(c) {
		const t = c.term;

		if (t.id === null)
			return;
		try {
			await call("DELETE", envPath(c.key) + "/terminals/" +
			    encodeURIComponent(t.id));
		} catch (e) {
			if (token !== null)
				termSay(c, errorText(e), true);
		}
	}

	function termEnd(c, why) {
		const t = c.term;

		if (t.stream !== null)
			t.stream.close();
		t.stream = null;
		if (t.observer !== null)
			t.observer.disconnect();
		t.observer = null;
		if (t.xterm !== null)
			t.xterm.dispose();
		t.xterm = null;
		c.root.__term = null;
		t.id = null;
		t.box.replaceChildren();
		t.box.classList.add("idle");
		t.kill.disabled = true;
		if (why)
			termSay(c, why, false);
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
