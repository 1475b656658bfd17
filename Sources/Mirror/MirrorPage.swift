/// The second screen's page: one file with its CSS and script inline, no external requests, no framework.
///
/// It pairs with the 6-digit code when the device has no token yet, then follows `/api/v1/stream` with the
/// browser's `EventSource` (which reconnects and sends `Last-Event-ID` by itself) and sends each tap as a control
/// with a fresh request id, retried with the same id until it is answered.
enum MirrorPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
        <meta name="color-scheme" content="dark light">
        <title>cyclelog</title>
        <style>
        :root{--bg:#0d0f12;--panel:#181c22;--text:#f2f4f7;--dim:#9aa4b2;--accent:#ffb020;--good:#3ecf8e;--bad:#ff5d5d;--line:#2a3038}
        @media (prefers-color-scheme:light){:root.auto{--bg:#f6f7f9;--panel:#fff;--text:#111;--dim:#555;--line:#d9dde3}}
        *{box-sizing:border-box}
        html,body{margin:0;background:var(--bg);color:var(--text);font:16px/1.25 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
        body{padding:max(8px,env(safe-area-inset-top)) 8px max(8px,env(safe-area-inset-bottom))}
        .banner{display:none;padding:10px 12px;border-radius:8px;margin-bottom:8px;font-weight:600}
        .banner.show{display:block}
        /* Over the page's top, never above it: a banner that comes or goes never moves a button under a thumb. */
        #alerts{position:fixed;top:max(8px,env(safe-area-inset-top));left:8px;right:8px;z-index:10}
        #stale{background:#5a4300}#down{background:#5a1b1b}#info{background:var(--panel);color:var(--dim);font-weight:400}
        header{display:flex;justify-content:space-between;align-items:baseline;gap:8px;margin:2px 4px 8px}
        #state{font-size:1.3rem;font-weight:700;text-transform:uppercase;letter-spacing:.05em}
        #state.running{color:var(--good)}#state.paused,#state.armed{color:var(--accent)}
        #title{color:var(--dim);overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        .grid{display:grid;grid-template-columns:repeat(2,1fr);gap:8px}
        .tile{background:var(--panel);border-radius:12px;padding:8px 10px;min-width:0}
        .tile .label{color:var(--dim);font-size:.85rem;text-transform:uppercase;letter-spacing:.04em}
        .tile .value{font-size:clamp(2rem,11vw,3.6rem);font-weight:700;font-variant-numeric:tabular-nums;line-height:1.1}
        .tile .unit{font-size:1rem;color:var(--dim);font-weight:400;margin-left:4px}
        .tile.big{grid-column:span 2}.tile.big .value{font-size:clamp(3.5rem,24vw,7rem);color:var(--accent)}
        .tile .sub{color:var(--dim);font-variant-numeric:tabular-nums}
        @media (orientation:landscape) and (min-width:640px){.grid{grid-template-columns:repeat(4,1fr)}.tile.big{grid-row:span 2}}
        progress{width:100%;height:10px;accent-color:var(--accent)}
        #sensors{display:flex;flex-wrap:wrap;gap:6px;margin:8px 0}
        .chip{border:1px solid var(--line);border-radius:999px;padding:4px 10px;font-size:.9rem}
        .chip.connected,.chip.streaming{border-color:var(--good)}.chip.lost,.chip.searching{border-color:var(--bad)}
        .chip.low{background:#5a4300;border-color:var(--accent);font-weight:700}
        #goal{text-transform:none;letter-spacing:0}
        .controls{display:grid;grid-template-columns:repeat(2,1fr);gap:8px;margin-top:8px}
        button,input{font:inherit;min-height:56px;border-radius:12px;border:1px solid var(--line);background:var(--panel);color:var(--text);padding:0 14px}
        button{font-size:1.2rem;font-weight:700;touch-action:manipulation}
        button:disabled{opacity:.35}
        button.primary{background:var(--accent);color:#111;border:none}
        button.danger{border-color:var(--bad);color:var(--bad)}
        button.hold{background:linear-gradient(90deg,var(--bad) var(--p,0%),var(--panel) var(--p,0%))}
        button:focus-visible,input:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
        .row{display:flex;gap:8px;margin-top:8px}.row input{flex:1;min-width:0}
        #start{display:grid;gap:8px;margin-top:8px}
        #pending{color:var(--accent);min-height:1.4em;margin:6px 4px}
        #pair{max-width:420px;margin:12vh auto;display:none}
        #pair h1{font-size:1.6rem}#pair input{width:100%;margin:6px 0;font-size:1.6rem;letter-spacing:.2em;text-align:center}
        #pair button{width:100%}
        .hidden{display:none!important}
        dialog{background:var(--panel);color:var(--text);border:1px solid var(--line);border-radius:12px}
        </style>
        </head>
        <body>
        <section id="pair" aria-labelledby="pairTitle">
          <h1 id="pairTitle">Pair this screen</h1>
          <p>On the recorder, run <code>cyclelog-mirror pair</code> and type the 6-digit code it shows (or scan its QR code).</p>
          <form id="pairForm">
            <label for="code">Code</label>
            <input id="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" pattern="[0-9]{6}" required>
            <label for="deviceName">This device's name</label>
            <input id="deviceName" maxlength="60" value="phone" style="letter-spacing:0;font-size:1.1rem">
            <button class="primary" type="submit">Pair</button>
          </form>
          <p id="pairError" role="alert"></p>
        </section>
        <main id="ride" class="hidden">
          <div id="alerts">
            <div id="down" class="banner" role="status">Reconnecting to the recorder…</div>
            <div id="stale" class="banner" role="status">Stale: nothing arrived for 3 s</div>
            <div id="norecorder" class="banner" style="background:#5a1b1b" role="status">No recorder is running: start one with <code>cyclelog record --wait</code>.</div>
          </div>
          <header><span id="state" aria-live="polite">…</span><span id="title"></span></header>
          <div class="grid">
            <div class="tile big"><div class="label">Power 3 s</div><div class="value"><span id="power">—</span><span class="unit">W</span></div><div class="sub">now <span id="ipower">—</span> W</div></div>
            <div class="tile"><div class="label">Cadence</div><div class="value"><span id="cadence">—</span><span class="unit">rpm</span></div></div>
            <div class="tile"><div class="label">Speed</div><div class="value"><span id="speed">—</span><span class="unit">km/h</span></div></div>
            <div class="tile"><div class="label">Heart rate</div><div class="value"><span id="hr">—</span><span class="unit">bpm</span></div></div>
            <div class="tile"><div class="label">Distance</div><div class="value"><span id="distance">—</span><span class="unit">km</span></div></div>
            <div class="tile"><div class="label">Elapsed</div><div class="value" id="elapsed">—</div><div class="sub">moving <span id="moving">—</span></div></div>
            <div class="tile"><div class="label">Lap <span id="lap">—</span></div><div class="value" id="laptime">—</div><div class="sub">water <span id="water">0</span> ml</div></div>
          </div>
          <div id="goalBox" class="tile hidden" style="margin-top:8px"><div class="label">Goal <span id="goal"></span></div><progress id="goalProgress" max="1" value="0"></progress></div>
          <div id="workoutBox" class="tile hidden" style="margin-top:8px" aria-label="Structured workout">
            <div class="label"><span id="workoutName"></span> · <span id="workoutStep"></span></div>
            <div class="value"><span id="workoutTarget">—</span><span class="unit" id="workoutUnit">W</span> <span class="unit" id="workoutLeft"></span></div>
            <div class="sub">next <span id="workoutNext">—</span> · intensity <span id="workoutIntensity">100</span> %</div>
            <svg id="workoutProfile" viewBox="0 0 300 40" preserveAspectRatio="none" width="100%" height="48" role="img" aria-label="The workout's targets, and where the ride is"></svg>
            <div class="controls" id="workoutControls">
              <button id="workoutEasier" aria-label="Every target 5 percent easier">−5 %</button>
              <button id="workoutHarder" aria-label="Every target 5 percent harder">+5 %</button>
              <button id="workoutSkip">Skip step</button>
            </div>
          </div>
          <div id="trainerBox" class="tile hidden" style="margin-top:8px" aria-label="Smart trainer">
            <div class="label">Trainer <span id="trainerState"></span></div>
            <div class="value" id="trainerTarget">—</div>
            <div class="sub" id="trainerMessage" role="status"></div>
            <div class="sub" id="trainerHolder" role="status"></div>
            <div class="controls" id="trainerControls">
              <button id="trainerDown" aria-label="Target power down 10 watts">−10 W</button>
              <button id="trainerUp" aria-label="Target power up 10 watts">+10 W</button>
              <button id="trainerErg">ERG</button>
              <button id="trainerSim">Sim</button>
              <button id="trainerFree">Free</button>
            </div>
          </div>
          <div id="sensors" aria-label="Sensors"></div>
          <div id="pending" aria-live="polite"></div>
          <div id="start" class="hidden" aria-label="Suggested workouts"></div>
          <div id="rideControls" class="controls">
            <button id="pauseResume" class="primary">Pause</button>
            <button id="lapButton">Lap</button>
            <button id="undoButton" class="hidden">Undo</button>
            <button id="endButton" class="hold danger" aria-label="End: hold for one second">Hold to end</button>
            <button id="cancelButton" class="danger">Cancel</button>
            <button id="water250">Water +250</button>
            <button id="water500">Water +500</button>
          </div>
          <form id="noteForm" class="row"><input id="note" maxlength="200" placeholder="A note (flat tyre, gel…)" aria-label="Note"><button type="submit">Note</button></form>
          <div id="info" class="banner"></div>
        </main>
        <dialog id="confirm"><p>Cancel this ride? Nothing of it is kept.</p><form method="dialog" class="row"><button value="no">Keep riding</button><button value="yes" class="danger">Cancel ride</button></form></dialog>
        <script>
        "use strict";
        const $ = (id) => document.getElementById(id);
        let status = null, lastArrival = 0, source = null, streamUp = false;
        // The types this screen was granted, as the last snapshot said (null until one came).
        let granted = null;
        // For opening the stream again when it goes silent: the last event id seen, when this connection was
        // opened, and whether live values came over it.
        let lastEventId = "", openedAt = 0, liveOnThisStream = false;

        // Request ids come from the system's random source (crypto.randomUUID needs a secure page; this does not).
        function requestId() {
          const bytes = new Uint8Array(16);
          crypto.getRandomValues(bytes);
          return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
        }

        async function api(method, path, body) {
          const init = { method, credentials: "same-origin", headers: {} };
          if (body !== undefined) {
            init.headers["Content-Type"] = "application/json";
            init.headers["X-Cyclelog-Request"] = "1";
            init.body = JSON.stringify(body);
          }
          const response = await fetch(path, init);
          let json = null;
          try { json = await response.json(); } catch (e) {}
          return { status: response.status, json };
        }

        // ---- Pairing ----
        $("pairForm").addEventListener("submit", async (event) => {
          event.preventDefault();
          $("pairError").textContent = "";
          try {
            // The page shows every type and has every control: it asks for them all, heart rate by name; the rider's
            // offer (`cyclelog-mirror pair --types`) decides what it is given.
            const answer = await api("POST", "/api/v1/pair", { code: $("code").value.trim(), name: $("deviceName").value.trim(), types: "control,hr" });
            if (answer.status === 200) { start(); return; }
            $("pairError").textContent = (answer.json && answer.json.error) || ("pairing failed (" + answer.status + ")");
          } catch (e) { $("pairError").textContent = "the mirror did not answer"; }
        });

        async function start() {
          let answer;
          try { answer = await api("GET", "/api/v1/status"); } catch (e) { answer = { status: 0 }; }
          if (answer.status === 401) return askToPair();
          $("pair").style.display = "none";
          $("ride").classList.remove("hidden");
          if (answer.status === 200) show(answer.json); else show(null);
          connect();
          keepScreenOn();
        }

        function askToPair() { $("pair").style.display = "block"; $("ride").classList.add("hidden"); }

        // ---- The stream ----
        // `source` is the stream the page reads, or the newest attempt to open one. `patient` is an older attempt
        // still opening, left to finish for up to 30 s: on a slow network (or a loaded mirror) opening a stream
        // over TLS can take longer than the 1.5 s after which a new attempt starts, and giving every attempt up at
        // 1.5 s would never open one. At most two are opening at a time, so the controls keep their connections.
        let patient = null, patientSince = 0;
        function connect() {
          const now = Date.now();
          if (patient && now - patientSince > 30000) { patient.close(); patient = null; }
          if (source && source.readyState === EventSource.CONNECTING && !patient && now - openedAt < 30000) { patient = source; patientSince = openedAt; }
          else if (source) source.close();
          const attempt = new EventSource("/api/v1/stream" + (lastEventId ? "?lastEventId=" + encodeURIComponent(lastEventId) : ""));
          source = attempt;
          openedAt = now; liveOnThisStream = false;
          // Whichever attempt opens first is read; the other is closed.
          attempt.onopen = () => {
            if (attempt === patient) { source.close(); source = attempt; liveOnThisStream = false; }
            else if (patient) patient.close();
            patient = null;
            streamUp = true; banners();
          };
          attempt.onerror = () => {
            if (attempt === patient && attempt.readyState === EventSource.CLOSED) patient = null;
            if (attempt === source) { streamUp = false; banners(); }
          };
          const on = (name, handle) => attempt.addEventListener(name, (e) => { if (attempt === source) handle(e); });
          on("snapshot", (e) => { arrived(e); const s = JSON.parse(e.data); granted = s.types || null; show(s.recorder ? s : null); });
          on("status", (e) => { arrived(e); if (status) { Object.assign(status, JSON.parse(e.data)); show(status); } });
          on("live", (e) => { arrived(e); liveOnThisStream = true; live(JSON.parse(e.data)); });
          on("event", (e) => { arrived(e); eventShown(JSON.parse(e.data)); });
        }
        function arrived(e) { lastArrival = Date.now(); if (e.lastEventId) lastEventId = e.lastEventId; banners(); }
        // A phone that drops off Wi-Fi sees no error: its connection just goes quiet, and when it is back the server's
        // TCP retries come seconds apart. So a stream that carried live values and fell silent for 2.5 s, or one
        // still opening after 1.5 s, is opened again (with the last event id, so no control event is lost): the
        // first fresh value comes within about 2 s of the network's return.
        function watch() {
          const now = Date.now();
          if ((source.readyState === EventSource.OPEN && liveOnThisStream && now - lastArrival > 2500)
              || (source.readyState === EventSource.CONNECTING && now - openedAt > 1500)) connect();
          else if (source.readyState === EventSource.CLOSED && now - openedAt > 3000) reopen();
        }
        // A stream the mirror answered with an error (503 while too many screens are open, or a proxy's page) is
        // closed for good by the browser, which never asks again: the page asks every 3 s, and shows the pairing
        // form once the device is no longer paired.
        async function reopen() {
          openedAt = Date.now();
          let answer = null;
          try { answer = await api("GET", "/api/v1/status"); } catch (e) {}
          if (answer && answer.status === 401) { source = null; return askToPair(); }
          connect();
        }

        function banners() {
          $("down").classList.toggle("show", !streamUp);
          const running = status && status.state === "running";
          $("stale").classList.toggle("show", streamUp && running && Date.now() - lastArrival > 3000);
          $("norecorder").classList.toggle("show", streamUp && !status);
        }
        setInterval(() => { banners(); if (source) watch(); }, 500);

        // ---- Showing ----
        // A value not known and one of a type this screen was not granted look the same: "—".
        const number = (v, digits) => v === null || v === undefined ? "—" : Number(v).toFixed(digits);
        // A goal as the recorder spells it (3600s, 30km, 600kJ) in a rider's words: 1 h, 30 km, 600 kJ.
        function goalWords(goal) {
          const m = /^([0-9.]+)(s|km|kJ)$/.exec(goal);
          if (!m) return goal;
          if (m[2] !== "s") return m[1] + " " + m[2];
          const t = Math.round(+m[1]), parts = [[Math.floor(t / 3600), "h"], [Math.floor(t / 60) % 60, "min"], [t % 60, "s"]];
          return parts.filter(p => p[0] > 0).map(p => p[0] + " " + p[1]).join(" ") || "0 s";
        }
        function clock(seconds) {
          if (seconds === null || seconds === undefined) return "—";
          const s = Math.floor(seconds), h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
          return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(r).padStart(2, "0");
        }

        function show(s) {
          status = s;
          const can = (s && s.can) || {};
          $("state").textContent = s ? s.state : "no recorder";
          $("state").className = s ? s.state : "";
          $("title").textContent = s && s.name ? s.name : (s && s.workoutId ? "Workout " + s.workoutId : "");
          $("power").textContent = number(s && s.powerWatts, 0);
          $("ipower").textContent = number(s && s.instantaneousPowerWatts, 0);
          $("cadence").textContent = number(s && s.cadenceRPM, 0);
          $("speed").textContent = number(s && s.speedMetersPerSecond != null ? s.speedMetersPerSecond * 3.6 : null, 1);
          $("hr").textContent = number(s && s.heartRateBPM, 0);
          $("distance").textContent = number(s && s.distanceMeters != null ? s.distanceMeters / 1000 : null, 2);
          $("elapsed").textContent = clock(s && s.elapsedSeconds);
          $("moving").textContent = clock(s && s.movingSeconds);
          $("lap").textContent = s && s.lap ? s.lap : "—";
          $("laptime").textContent = clock(s && s.lapElapsedSeconds);
          $("water").textContent = number(s && s.waterMillilitres, 0);
          $("goalBox").classList.toggle("hidden", !(s && s.goal));
          if (s && s.goal) { $("goal").textContent = goalWords(s.goal) + (s.goalProgress == null ? "" : ", " + Math.floor(s.goalProgress * 100) + " %"); $("goalProgress").value = s.goalProgress || 0; }
          const chips = $("sensors");
          chips.textContent = "";
          for (const sensor of (s && s.sensors) || []) {
            const chip = document.createElement("span");
            // A battery at 20 % or less stands out: it may not last the ride.
            const low = sensor.batteryPercent !== null && sensor.batteryPercent <= 20;
            chip.className = "chip " + sensor.state + (low ? " low" : "");
            chip.textContent = sensor.name + " · " + sensor.state + (sensor.batteryPercent === null ? "" : " · " + sensor.batteryPercent + "%" + (low ? " battery low" : ""));
            chips.appendChild(chip);
          }
          const waiting = s && (s.state === "waiting");
          $("start").classList.toggle("hidden", !waiting);
          $("rideControls").classList.toggle("hidden", !!waiting || !s);
          if (waiting && $("start").dataset.shown !== JSON.stringify(s.suggestedWorkouts)) {
            $("start").dataset.shown = JSON.stringify(s.suggestedWorkouts);
            $("start").textContent = "";
            for (const workout of s.suggestedWorkouts || []) {
              const button = document.createElement("button");
              button.className = "primary";
              button.textContent = "Start: " + workout.title;
              button.onclick = () => send("start", { preset: workout.id }, "Starting " + workout.title);
              $("start").appendChild(button);
            }
          }
          $("pauseResume").textContent = can.resume ? "Resume" : "Pause";
          $("pauseResume").disabled = !(can.pause || can.resume);
          $("lapButton").disabled = !can.lap;
          $("endButton").disabled = !can.end;
          $("cancelButton").disabled = !can.cancel;
          $("water250").disabled = $("water500").disabled = !(can.pause || can.resume);
          // Only the controls this screen was granted are shown (the mirror refuses the others anyway).
          const may = (type) => !granted || granted.includes(type);
          if (!may("ride")) $("start").classList.add("hidden");
          for (const id of ["pauseResume", "lapButton", "endButton", "cancelButton", "workoutControls"]) $(id).classList.toggle("hidden", !may("ride"));
          // The action that can still be undone, named ("Undo lap 4"), for as long as it can be.
          const undoable = s && s.undoId && may("ride") && (!s.undoType || may(s.undoType));
          $("undoButton").classList.toggle("hidden", !undoable);
          if (undoable) { $("undoButton").textContent = "Undo " + s.undoAction; $("undoButton").dataset.action = s.undoId; }
          $("noteForm").classList.toggle("hidden", !(s && (can.pause || can.resume)) || !may("ride"));
          $("water250").classList.toggle("hidden", !may("intake"));
          $("water500").classList.toggle("hidden", !may("intake"));
          $("trainerControls").classList.toggle("hidden", !may("trainer"));
          trainerShown(s);
          workoutShown(s);
          banners();
        }

        // The structured workout: the step and its target (or range), the time left in it, the next target, the
        // whole workout's profile with where the ride is, and Skip and ±5 % intensity.
        function workoutShown(s) {
          const on = !!(s && s.workoutPlanId);
          $("workoutBox").classList.toggle("hidden", !on);
          if (!on) return;
          const done = s.stepIndex >= s.stepCount;
          $("workoutName").textContent = s.workoutPlanName || s.workoutPlanId;
          $("workoutStep").textContent = done ? "complete" : "step " + (s.stepIndex + 1) + " of " + s.stepCount + (s.stepName ? " · " + s.stepName : "");
          const range = s.targetRangeLowWatts !== null && s.targetRangeHighWatts !== null;
          // A step ridden in simulation shows its grade.
          const grade = !range && s.targetPowerWatts === null && s.gradePercent !== null;
          $("workoutTarget").textContent = done ? "—" : range ? number(s.targetRangeLowWatts, 0) + "–" + number(s.targetRangeHighWatts, 0) : s.targetPowerWatts !== null ? number(s.targetPowerWatts, 0) : grade ? number(s.gradePercent, 1) : "free";
          $("workoutUnit").textContent = done || (!range && s.targetPowerWatts === null) ? (grade && !done ? "% grade" : "") : "W";
          $("workoutLeft").textContent = s.stepSecondsLeft === null ? "" : clock(s.stepSecondsLeft) + " left";
          $("workoutNext").textContent = s.nextTargetPowerWatts === null ? "—" : number(s.nextTargetPowerWatts, 0) + " W";
          $("workoutIntensity").textContent = s.intensityPercent;
          $("workoutSkip").disabled = done;
          profileShown(s);
        }
        function profileShown(s) {
          const svg = $("workoutProfile"), segments = (s.workoutProfile || "").split(",").filter(Boolean).map((part) => {
            const [seconds, start, end] = part.split(":");
            return { seconds: +seconds, start: start === "-" ? null : +start, end: end === "-" ? null : +end };
          });
          const total = Math.max(1, segments.reduce((sum, segment) => sum + segment.seconds, 0));
          const highest = Math.max(1, ...segments.map((segment) => Math.max(segment.start || 0, segment.end || 0)));
          const ns = "http://www.w3.org/2000/svg";
          svg.textContent = "";
          let at = 0, position = 0;
          segments.forEach((segment, index) => {
            const x0 = at / total * 300, x1 = (at + segment.seconds) / total * 300;
            if (index === s.stepIndex) position = at + Math.max(0, segment.seconds - (s.stepSecondsLeft === null ? segment.seconds : s.stepSecondsLeft));
            at += segment.seconds;
            const shape = document.createElementNS(ns, "polygon");
            const y = (watts) => 40 - (watts === null ? 4 : watts / highest * 38);
            shape.setAttribute("points", x0 + ",40 " + x0 + "," + y(segment.start) + " " + x1 + "," + y(segment.end === null ? segment.start : segment.end) + " " + x1 + ",40");
            shape.setAttribute("fill", index < s.stepIndex ? "var(--line)" : index === s.stepIndex ? "var(--accent)" : "var(--dim)");
            svg.appendChild(shape);
          });
          if (s.stepIndex >= segments.length) position = total;
          const line = document.createElementNS(ns, "line");
          const x = position / total * 300;
          for (const [key, value] of [["x1", x], ["x2", x], ["y1", 0], ["y2", 40], ["stroke", "var(--text)"], ["stroke-width", 2]]) line.setAttribute(key, value);
          line.setAttribute("id", "workoutPosition");
          svg.appendChild(line);
        }

        // The smart trainer: its mode and target, what it refused in words, the +/- 10 W and mode buttons.
        const trainerRefused = { text: "", at: 0 };
        function trainerShown(s) {
          const mode = s && s.trainerMode;
          $("trainerBox").classList.toggle("hidden", !mode);
          if (!mode) return;
          const targets = { erg: () => number(s.targetPowerWatts, 0) + " W", sim: () => number(s.gradePercent, 1) + " %", resistance: () => number(s.resistanceLevel, 0) + " %", free: () => "free" };
          $("trainerTarget").textContent = (mode === "erg" ? "ERG " : mode === "sim" ? "Sim " : mode === "resistance" ? "Resistance " : "") + (targets[mode] || targets.free)();
          $("trainerState").textContent = s.trainerState + (s.powerMatchOffsetWatts === null ? "" : " · match " + number(s.powerMatchOffsetWatts, 0) + " W");
          // The trainer's own refusal first; else a command the recorder refused, for 8 s, where the rider looks.
          $("trainerMessage").textContent = s.trainerMessage || (Date.now() - trainerRefused.at < 8000 ? trainerRefused.text : "");
          $("trainerUp").disabled = $("trainerDown").disabled = mode !== "erg";
          // An app on the sensor hub steering it; a button here takes it back.
          $("trainerHolder").textContent = s.trainerHolder ? "steered by " + s.trainerHolder + " through the hub" : "";
        }

        // A notification's readings, shown only for the channels whose source it is (`shown`: the ride's source
        // priority, a meter before a trainer), so that the page agrees with the dashboard and the stored ride.
        function live(reading) {
          if (!status) return;
          const shows = (key) => reading[key] !== undefined && (!reading.shown || reading.shown.includes(key));
          if (shows("powerWatts")) { status.instantaneousPowerWatts = reading.powerWatts; $("ipower").textContent = number(reading.powerWatts, 0); }
          if (shows("cadenceRPM")) $("cadence").textContent = number(reading.cadenceRPM, 0);
          if (shows("heartRateBPM")) $("hr").textContent = number(reading.heartRateBPM, 0);
          if (shows("speedMetersPerSecond")) $("speed").textContent = number(reading.speedMetersPerSecond * 3.6, 1);
        }

        function eventShown(event) {
          if (status && event.controlSequence > status.controlSequence) status.controlSequence = event.controlSequence;
          const words = { start: "Started", pause: "Paused", resume: "Resumed", lap: "Lap", end: "Ended", cancel: "Cancelled", marker: "Note", intake: "Drink", undo: "Undone" };
          let text = words[event.kind] || event.kind;
          if (event.kind === "marker") text += ": " + event.text;
          if (event.kind === "intake") text += ": " + event.amount + " " + event.unit + " " + event.intake;
          if (event.kind === "undo") text += ": " + event.action;
          $("info").textContent = text + " at " + new Date(event.time).toLocaleTimeString();
          $("info").classList.add("show");
        }

        // ---- Controls: one request id per tap, retried with it until answered (0.5, 1, 2, 4… s, for 30 s).
        // Taps go out one after another, each with the sequence the previous answer left, so that Lap then
        // Pause in quick succession is two controls, not one and a "stale".
        const inFlight = [];
        let queue = Promise.resolve();
        function send(command, args, label) {
          const began = Date.now();
          inFlight.push(label); pendingShown();
          queue = queue.then(() => sendNow(command, args, label, began)).finally(() => { inFlight.splice(inFlight.indexOf(label), 1); pendingShown(); });
        }
        async function sendNow(command, args, label, began) {
          const body = { requestId: requestId(), command, args: args || {} };
          // A trainer's target or a workout's step is not a control of the ride: it never goes stale when a lap
          // comes first.
          const ofTheRide = !["start", "target", "grade", "resistance", "trainer", "skip", "back", "extend", "intensity", "undo"].includes(command);
          if (status && ofTheRide) { body.expect = status.controlSequence; if (status.workoutId) body.workoutId = status.workoutId; }
          let delay = 500;
          for (;;) {
            // An End (or anything) never goes out more than 30 s after the tap: the rider may have ridden on.
            if (Date.now() - began > 30000) return say(label + ": not sent (no answer for 30 s)");
            let answer = null;
            try { answer = await api("POST", "/api/v1/control", body); } catch (e) {}
            if (answer && answer.status === 200) {
              if (status && answer.json) { status.state = answer.json.state; status.controlSequence = answer.json.controlSequence; }
              return;
            }
            if (answer && answer.status === 412) { if (answer.json && answer.json.status) show(answer.json.status); return say(label + ": the ride changed, look again"); }
            if (answer && [400, 401, 403, 409].includes(answer.status)) {
              const text = label + ": " + ((answer.json && answer.json.error) || answer.status);
              if (["target", "grade", "resistance", "trainer"].includes(command)) { Object.assign(trainerRefused, { text, at: Date.now() }); $("trainerMessage").textContent = text; }
              return say(text);
            }
            await new Promise((resolve) => setTimeout(resolve, delay));
            delay = Math.min(delay * 2, 4000);
          }
        }
        function pendingShown() { $("pending").textContent = inFlight.length ? "sending… " + inFlight.join(", ") : ""; }
        function say(text) { $("info").textContent = text; $("info").classList.add("show"); }

        $("pauseResume").onclick = () => send(status && status.can && status.can.resume ? "resume" : "pause", {}, $("pauseResume").textContent);
        $("lapButton").onclick = () => send("lap", {}, "Lap");
        // The action shown, by its number: two screens undoing it at once undo it once.
        $("undoButton").onclick = () => send("undo", { action: Number($("undoButton").dataset.action) }, $("undoButton").textContent);
        $("trainerUp").onclick = () => send("target", { change: 10 }, "+10 W");
        $("trainerDown").onclick = () => send("target", { change: -10 }, "−10 W");
        $("trainerErg").onclick = () => send("trainer", { mode: "erg" }, "ERG");
        $("trainerSim").onclick = () => send("trainer", { mode: "sim" }, "Sim");
        $("trainerFree").onclick = () => send("trainer", { mode: "free" }, "Trainer free");
        $("workoutSkip").onclick = () => send("skip", {}, "Skip");
        $("workoutEasier").onclick = () => send("intensity", { change: -5 }, "−5 %");
        $("workoutHarder").onclick = () => send("intensity", { change: 5 }, "+5 %");
        $("water250").onclick = () => send("intake", { kind: "water", amount: 250, unit: "ml" }, "Water 250 ml");
        $("water500").onclick = () => send("intake", { kind: "water", amount: 500, unit: "ml" }, "Water 500 ml");
        $("noteForm").addEventListener("submit", (event) => {
          event.preventDefault();
          const text = $("note").value.trim();
          if (text) { send("marker", { text }, "Note"); $("note").value = ""; }
        });
        $("cancelButton").onclick = () => $("confirm").showModal();
        $("confirm").addEventListener("close", () => { if ($("confirm").returnValue === "yes") send("cancel", {}, "Cancel"); });

        // End is held for one second: a bump on the road does not end a ride.
        let holdTimer = null, holdStart = 0;
        function holdBegin(event) {
          event.preventDefault();
          if ($("endButton").disabled) return;
          holdStart = Date.now();
          holdTimer = setInterval(() => {
            const part = Math.min(1, (Date.now() - holdStart) / 1000);
            $("endButton").style.setProperty("--p", part * 100 + "%");
            if (part >= 1) { holdEnd(); send("end", {}, "End"); }
          }, 50);
        }
        function holdEnd() { clearInterval(holdTimer); holdTimer = null; $("endButton").style.setProperty("--p", "0%"); }
        for (const name of ["pointerdown"]) $("endButton").addEventListener(name, holdBegin);
        for (const name of ["pointerup", "pointerleave", "pointercancel"]) $("endButton").addEventListener(name, holdEnd);
        $("endButton").addEventListener("keydown", (e) => { if ((e.key === " " || e.key === "Enter") && !holdTimer && !e.repeat) holdBegin(e); });
        $("endButton").addEventListener("keyup", (e) => { if (e.key === " " || e.key === "Enter") holdEnd(); });

        // ---- The screen stays on only on a secure page (Wake Lock) ----
        async function keepScreenOn() {
          if (!window.isSecureContext || !("wakeLock" in navigator)) {
            say("This page is not served over TLS, so it cannot keep the screen on: set the phone's auto-lock to never while riding.");
            return;
          }
          try { await navigator.wakeLock.request("screen"); } catch (e) {}
          document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") navigator.wakeLock.request("screen").catch(() => {}); });
        }

        start();
        </script>
        </body>
        </html>
        """#
}
