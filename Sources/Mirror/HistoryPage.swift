/// The ride history on a big screen (`GET /history`): one file with its CSS and script inline, no external
/// requests, no framework. Three views by the address's fragment: the rides (`#/`), one ride (`#/ride/ID`) and
/// fitness (`#/fitness`). Every number comes from the history API as it is (the JSON `show --json` prints), and
/// each carries its key and value in `data-key` / `data-value`; the pictures are the SVG the `Charts` module draws.
enum HistoryPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="dark">
        <title>cyclelog — rides</title>
        <style>
        :root{--bg:#0d0f12;--panel:#181c22;--text:#f2f4f7;--dim:#9aa4b2;--accent:#ffb020;--bad:#ff5d5d;--line:#2a3038}
        *{box-sizing:border-box}
        html,body{margin:0;background:var(--bg);color:var(--text);font:16px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
        body{padding:12px;max-width:1400px;margin:auto}
        @media (min-width:1800px){html,body{font-size:21px}body{max-width:1760px}}
        nav{display:flex;gap:16px;align-items:baseline;flex-wrap:wrap;margin-bottom:12px}
        nav b{font-size:1.2rem}
        a{color:var(--accent)}
        a:focus,button:focus,input:focus,select:focus{outline:3px solid var(--accent);outline-offset:2px}
        h1{font-size:1.4rem;margin:8px 0}h2{font-size:1.1rem;margin:20px 0 8px;color:var(--dim)}
        form{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin-bottom:12px}
        label{display:flex;flex-direction:column;font-size:.85rem;color:var(--dim);gap:2px}
        input,select,button{font:inherit;background:var(--panel);color:var(--text);border:1px solid var(--line);border-radius:8px;padding:8px 10px;min-height:44px}
        button{cursor:pointer}
        .scroll{overflow-x:auto}
        table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
        th,td{padding:8px 10px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
        th:first-child,td:first-child,td.text,th.text{text-align:left}
        th{color:var(--dim);font-weight:600;font-size:.85rem}
        .unfinished{color:var(--bad)}
        .recording{color:var(--accent)}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(9.5rem,1fr));gap:8px}
        .tile{background:var(--panel);border-radius:10px;padding:8px 10px}
        .tile .label{color:var(--dim);font-size:.8rem;text-transform:uppercase;letter-spacing:.04em}
        .tile .value{font-size:1.5rem;font-weight:700;font-variant-numeric:tabular-nums}
        .chart{background:var(--panel);border-radius:8px;overflow:hidden;position:relative;touch-action:none}
        .chart svg,.chart img{display:block;width:100%;height:auto}
        #chart svg{user-select:none;-webkit-user-select:none}
        #selection{position:absolute;top:0;bottom:0;background:rgba(255,176,32,.25);border:1px solid var(--accent);display:none;pointer-events:none}
        .message{background:var(--panel);border-radius:8px;padding:12px;color:var(--dim)}
        caption{text-align:left}
        .downloads a{margin-right:16px}
        img.spark{display:block;margin-left:auto}
        </style>
        </head>
        <body>
        <nav aria-label="cyclelog">
        <b>cyclelog</b><a href="#/">Rides</a><a href="#/fitness">Fitness</a><a href="/">The ride now</a>
        </nav>
        <main id="view" aria-live="polite"></main>
        <script>
        "use strict";
        const view = document.getElementById("view");
        const esc = t => String(t ?? "").replace(/[&<>"']/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"})[c]);
        const clock = s => { if (s == null) return "–"; s = Math.round(s); const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), x = s % 60; return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(x).padStart(2, "0"); };
        // Times as the viewer reads them: in the browser's own time zone (the API gives UTC, to the microsecond).
        const two = n => String(n).padStart(2, "0");
        const when = t => { const d = t ? new Date(String(t).replace(/(\.\d{3})\d+/, "$1")) : null; return d && !isNaN(d) ? d : null; };
        const day = t => { const d = when(t); return d ? `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}` : "–"; };
        const timeOfDay = t => { const d = when(t); return d ? `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}` : "–"; };
        const zone = (() => { try { return Intl.DateTimeFormat().resolvedOptions().timeZone || "local time"; } catch (e) { return "local time"; } })();
        const count = (n, one, many) => `${n} ${n === 1 ? one : many}`;
        // An FTP from long ago says how long: a value of years ago is not today's.
        const age = t => { const d = when(t); if (!d) return "–"; const days = Math.floor((Date.now() - d) / 864e5);
          return day(t).slice(0, 10) + (days > 42 ? ` (${days >= 730 ? Math.floor(days / 365) + " years" : days >= 60 ? Math.floor(days / 30) + " months" : days + " days"} ago)` : ""); };
        async function answer(path) {
          const response = await fetch("/api/v1/" + path, {credentials: "same-origin"});
          if (response.status === 401) throw new Error("This screen is not paired: open the link or enter the code of `cyclelog-mirror pair` on the page at /, then come back.");
          if (!response.ok) { let reason = response.statusText; try { reason = (await response.json()).error; } catch (e) {} throw new Error(reason); }
          return response;
        }
        async function api(path, text) {
          const response = await answer(path);
          return text ? response.text() : response.json();
        }
        function fail(error) { view.innerHTML = `<p class="message" role="alert">${esc(error.message)}</p>`; }
        // A number rounded as the command line shows it (watts, rpm, bpm, kcal and TSS whole; IF and VI to two
        // places), with its unit; its key and the API's exact value in data- attributes for tests and scripts.
        function num(key, value, unit, show) {
          const asTheCLI = ["W", "rpm", "bpm", "kcal"].includes(unit) || key === "trainingStressScore"
            ? v => Math.round(v) : ["intensityFactor", "variabilityIndex"].includes(key) ? v => v.toFixed(2) : v => v;
          const shown = value == null ? "–" : (show ? show(value) : asTheCLI(value)) + (unit ? " " + unit : "");
          return `<span data-key="${esc(key)}" data-value="${esc(value == null ? "null" : value)}">${esc(shown)}</span>`;
        }
        function tile(label, key, value, unit, show) {
          return `<div class="tile"><div class="label">${esc(label)}</div><div class="value">${num(key, value, unit, show)}</div></div>`;
        }
        const kmh = v => (v * 3.6).toFixed(1), km = v => (v / 1000).toFixed(2), kj = v => Math.round(v / 1000);

        async function rides() {
          const query = new URLSearchParams(location.hash.split("?")[1] || "");
          view.innerHTML = `<h1>Rides</h1>
            <form id="filter" role="search"><label>From<input type="date" name="since" value="${esc(query.get("since"))}"></label>
            <label>To<input type="date" name="until" value="${esc(query.get("until"))}"></label>
            <label>Name or source<input type="search" name="q" value="${esc(query.get("q"))}"></label><button>Show</button></form>
            <div id="list" class="message">Loading…</div>`;
          document.getElementById("filter").onsubmit = event => {
            event.preventDefault();
            const form = new URLSearchParams();
            for (const [name, value] of new FormData(event.target)) if (value) form.set(name, value);
            location.hash = "#/?" + form;
          };
          // A page of rides at a time, older ones when asked: a decade of riding is thousands of rows.
          async function page(after) {
            const words = new URLSearchParams(query);
            words.set("limit", "50");
            if (after != null) words.set("after", after);
            const response = await answer("workouts?" + words);
            return {rides: await response.json(), total: Number(response.headers.get("X-Total-Count")),
              more: /rel="next"/.test(response.headers.get("Link") || "")};
          }
          const row = ride => {
            const unfinished = ride.status !== "complete";
            const name = ride.name || ride.source.split("/").pop();
            return `<tr><td class="text">${unfinished ? esc(day(ride.start)) : `<a href="#/ride/${ride.id}">${esc(day(ride.start))}</a>`}</td>
              <td class="text">${esc(name)}${unfinished ? (ride.beingWritten ? ` <span class="recording">recording now</span>` : ` <span class="unfinished">unfinished — <code>cyclelog rebuild ${ride.id}</code> recovers it</span>`) : ""}</td>
              <td>${num("elapsedSeconds", ride.elapsedSeconds, "", clock)}</td><td>${num("distanceMeters", ride.distanceMeters, "km", km)}</td>
              <td>${num("averagePowerWatts", ride.averagePowerWatts, "W")}</td><td>${num("normalizedPowerWatts", ride.normalizedPowerWatts, "W")}</td><td>${num("trainingStressScore", ride.trainingStressScore)}</td>
              <td>${unfinished || ride.averagePowerWatts == null ? "–" : `<img class="spark" loading="lazy" width="120" height="28" src="/api/v1/workouts/${ride.id}/sparkline.svg" alt="Power over the ride, averaging ${ride.averagePowerWatts} W">`}</td></tr>`;
          };
          const first = await page(null);
          if (!first.rides.length) { document.getElementById("list").outerHTML = `<p class="message">No rides match.</p>`; return; }
          const shown = first.rides.slice();
          const caption = () => (shown.length < first.total ? `The newest ${shown.length} of ${count(first.total, "ride", "rides")}` : count(shown.length, "ride", "rides")) + ", newest first";
          document.getElementById("list").outerHTML = `<div class="scroll"><table id="rides"><caption class="message">${esc(caption())}</caption><thead><tr><th class="text">Date (${esc(zone)})</th><th class="text">Name</th><th>Duration</th><th>Distance</th><th>Average power</th><th>NP</th><th>TSS</th><th>Power</th></tr></thead><tbody>${shown.map(row).join("")}</tbody></table></div>`
            + (first.more ? `<p><button id="older">Older rides</button></p>` : "");
          const older = document.getElementById("older");
          if (older) older.onclick = async () => {
            older.disabled = true;
            try {
              const next = await page(shown[shown.length - 1].id);
              shown.push(...next.rides);
              document.querySelector("#rides tbody").insertAdjacentHTML("beforeend", next.rides.map(row).join(""));
              document.querySelector("#rides caption").textContent = caption();
              if (next.more) older.disabled = false; else older.parentNode.remove();
            } catch (error) { older.parentNode.outerHTML = `<p class="message" role="alert">${esc(error.message)}</p>`; }
          };
        }

        async function ride(id) {
          const [ride, month, quarter] = await Promise.all([api("workouts/" + id), api("power-curve?window=42d"), api("power-curve?window=90d")]);
          const title = ride.name || "Workout " + ride.id;
          const best = [["1 s", 1], ["5 s", 5], ["1 min", 60], ["5 min", 300], ["20 min", 1200], ["1 h", 3600]];
          view.innerHTML = `<h1>${esc(title)} <small>${esc(day(ride.start))} ${esc(zone)}</small></h1>
            <div class="grid">
            ${tile("Elapsed", "elapsedSeconds", ride.elapsedSeconds, "", clock)}${tile("Moving", "movingSeconds", ride.movingSeconds, "", clock)}
            ${tile("Distance", "distanceMeters", ride.distanceMeters, "km", km)}${tile("Average power", "averagePowerWatts", ride.averagePowerWatts, "W")}
            ${tile("NP", "normalizedPowerWatts", ride.normalizedPowerWatts, "W")}${tile("Maximum power", "maximumPowerWatts", ride.maximumPowerWatts, "W")}
            ${tile("Work", "workJoules", ride.workJoules, "kJ", kj)}${tile("IF", "intensityFactor", ride.intensityFactor)}
            ${tile("TSS", "trainingStressScore", ride.trainingStressScore)}${tile("FTP", "ftpWatts", ride.ftpWatts, "W")}
            ${tile("Cadence", "averageCadenceRPM", ride.averageCadenceRPM, "rpm")}${tile("Speed", "averageSpeedMetersPerSecond", ride.averageSpeedMetersPerSecond, "km/h", kmh)}
            ${tile("Heart rate", "averageHeartRateBPM", ride.averageHeartRateBPM, "bpm")}${tile("Energy", "energyKilocalories", ride.energyKilocalories, "kcal")}
            ${tile("VI", "variabilityIndex", ride.variabilityIndex)}${tile("Water", "waterMillilitres", ride.waterMillilitres, "ml")}
            </div>
            <h2>The ride</h2>
            <p class="message">Drag across the chart (or give seconds below) to see a range's statistics, computed as a lap's are; Zoom shows only that range.</p>
            <div class="chart" id="chart" role="img" aria-label="Power, cadence, speed and heart rate over the ride; the numbers are in the tables"><div id="selection"></div></div>
            <form id="range"><label>From second<input name="from" type="number" min="0" step="1" required></label>
            <label>To second<input name="to" type="number" min="1" step="1" required></label>
            <button name="stats">Statistics</button><button type="button" id="zoom">Zoom</button><button type="button" id="whole">Whole ride</button></form>
            <div id="rangeStats"></div>
            ${ride.plan ? `<h2>Workout: ${esc(ride.plan.workout)}</h2><p class="message">${ride.plan.completed ? "Completed" : "Not completed"}${ride.plan.ftpWatts != null ? " at FTP " + ride.plan.ftpWatts + " W" : ""}${ride.plan.compliancePercent != null ? "; " + Math.round(ride.plan.compliancePercent) + " % of the seconds within their target (±5 %, ±10 W under 200 W)" : ""}. The chart shades each step's target under the power.</p><div class="scroll"><table id="plan"><thead><tr><th>Step</th><th>Start</th><th>Time</th><th>Target</th><th>Power</th><th>On target</th><th>Cadence</th></tr></thead><tbody>
            ${ride.plan.steps.map(st => `<tr data-from="${st.startSecond}" data-to="${st.startSecond + st.runningSeconds}"><td>${st.step}</td><td>${clock(st.startSecond)}</td><td>${clock(st.runningSeconds)}</td><td>${st.meanTargetWatts == null ? "free" : Math.round(st.meanTargetWatts) + " W"}</td><td>${st.meanPowerWatts == null ? "–" : Math.round(st.meanPowerWatts) + " W"}</td><td>${st.compliancePercent == null ? "–" : Math.round(st.compliancePercent) + " %"}</td><td>${st.meanCadenceRPM == null ? "–" : Math.round(st.meanCadenceRPM) + " rpm"}${st.cadenceTargetRPM ? " (" + st.cadenceTargetRPM[0] + "–" + st.cadenceTargetRPM[1] + ")" : ""}</td></tr>`).join("")}
            </tbody></table></div>` : ""}
            ${ride.trainer ? `<h2>Trainer</h2><p class="message" id="trainer">${Object.entries(ride.trainer.secondsByMode).filter(([, s]) => s > 0).map(([m, s]) => ({erg: "ERG", sim: "Simulation", resistance: "Resistance", free: "Free"})[m] + " " + clock(s)).join(", ") || "No running time in a mode"}.${ride.trainer.apps.length ? " Steered by " + esc(ride.trainer.apps.join(", ")) + " through the hub for " + clock(ride.trainer.appSeconds) + "." : ""}</p>` : ""}
            <h2>Laps</h2><div class="scroll"><table id="laps"><thead><tr><th>Lap</th><th>Start</th><th>Elapsed</th><th>Distance</th><th>Average power</th><th>NP</th><th>Cadence</th><th>Heart rate</th></tr></thead><tbody>
            ${ride.laps.map(lap => `<tr data-lap="${lap.number}" data-from="${Math.round(lap.startOffsetSeconds)}" data-to="${Math.round(lap.startOffsetSeconds + lap.elapsedSeconds)}"><td>${lap.number}</td><td>${clock(lap.startOffsetSeconds)}</td><td>${num("elapsedSeconds", lap.elapsedSeconds, "", clock)}</td><td>${num("distanceMeters", lap.distanceMeters, "km", km)}</td><td>${num("averagePowerWatts", lap.averagePowerWatts, "W")}</td><td>${num("normalizedPowerWatts", lap.normalizedPowerWatts, "W")}</td><td>${num("averageCadenceRPM", lap.averageCadenceRPM, "rpm")}</td><td>${num("averageHeartRateBPM", lap.averageHeartRateBPM, "bpm")}</td></tr>`).join("")}
            </tbody></table></div>
            <h2>Best power against the rider's best</h2><div class="scroll"><table id="best"><thead><tr><th class="text">Duration</th><th>This ride</th><th>Best of 42 days</th><th>Best of 90 days</th></tr></thead><tbody>
            ${best.map(([label, seconds]) => `<tr><td class="text">${label}</td><td>${num("powerCurveWatts." + seconds, (ride.powerCurveWatts || {})[seconds], "W")}</td><td>${num("best42d." + seconds, month.watts[seconds - 1], "W")}</td><td>${num("best90d." + seconds, quarter.watts[seconds - 1], "W")}</td></tr>`).join("")}
            </tbody></table></div>
            <h2>W′ balance</h2>${ride.wPrimeBalanceMinimumJoules != null ? `<div class="chart"><img id="wprime" src="/api/v1/workouts/${ride.id}/wprime.svg?theme=dark" alt="W′ balance over the ride against CP ${ride.criticalPowerWatts} W and W′ ${ride.wPrimeJoules} J: lowest ${ride.wPrimeBalanceMinimumJoules} J (integral), ${ride.wPrimeBalanceMinimumDifferentialJoules} J (differential)"></div>` : `<p class="message">No W′ balance: the ride has no power, or no critical-power model was known on its date.</p>`}
            <h2>Time in zones</h2>${ride.powerZones ? `<div class="scroll"><table id="zones"><thead><tr><th class="text">Zone</th><th>Watts</th><th>Time</th></tr></thead><tbody>${ride.powerZones.map(z => `<tr><td class="text">${z.zone} ${esc(z.name)}</td><td>${z.lowWatts}${z.highWatts == null ? "+" : "–" + z.highWatts}</td><td>${num("zone" + z.zone, z.seconds, "", clock)}</td></tr>`).join("")}</tbody></table></div>` : `<p class="message">No FTP was known on this date: no zones.</p>`}
            <h2>Events</h2><div class="scroll"><table id="events"><tbody>${ride.events.map(e => `<tr><td class="text">${esc(e.type)}</td><td class="text">${esc(timeOfDay(e.time))}</td><td class="text">${esc(e.text || (e.amount != null ? e.amount + " " + (e.unit || "") + " " + (e.intake || "") : ""))}</td></tr>`).join("") || "<tr><td>none</td></tr>"}</tbody></table></div>
            <h2>Sensors and dropouts</h2><div class="scroll"><table id="sensors"><tbody>${ride.sensors.map(s => `<tr><td class="text">${esc(s.name || s.address)}</td><td class="text">${esc(s.address)}</td><td>${num("batteryPercent", s.batteryPercent, "%")}</td></tr>`).join("")}
            ${ride.dropouts.map(d => `<tr><td class="text">dropout: ${esc(d.sensor)}</td><td class="text">${esc(d.reason)}</td><td>${esc(d.start ? timeOfDay(d.start) : "")}</td></tr>`).join("")}</tbody></table></div>
            <h2>Files</h2><p class="downloads">${["fit", "tcx", "csv", "journal"].map(k => `<a href="/api/v1/workouts/${ride.id}/export.${k}" download>${k.toUpperCase()}</a>`).join("")}</p>`;
          const chart = document.getElementById("chart"), selection = document.getElementById("selection"), form = document.getElementById("range");
          let svg = null;
          async function draw(from, to) {
            // Drawn at the page's own width (to 10 pixels), so that its text is read at its size on a phone too.
            const width = Math.max(320, Math.round(chart.clientWidth / 10) * 10 || 1100);
            const text = await api(`workouts/${id}/chart.svg?theme=dark&width=${width}` + (from == null ? "" : `&from=${from}&to=${to}`), true);
            const drawn = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
            if (svg) svg.remove();
            svg = chart.insertBefore(document.importNode(drawn, true), selection);
            selection.style.display = "none";
          }
          // From a position on the picture to seconds of the ride, by the plot's place the picture declares.
          function second(clientX) {
            const box = svg.getBoundingClientRect(), scale = box.width / svg.viewBox.baseVal.width;
            const left = +svg.dataset.plotLeft * scale, width = +svg.dataset.plotWidth * scale;
            const fraction = Math.min(1, Math.max(0, (clientX - box.left - left) / width));
            return Math.round(+svg.dataset.from + fraction * (+svg.dataset.to - +svg.dataset.from));
          }
          async function stats(from, to) {
            form.from.value = from; form.to.value = to;
            const range = await api(`workouts/${id}/range?from=${from}&to=${to}`);
            document.getElementById("rangeStats").innerHTML = `<div class="grid" id="rangeGrid">
              ${tile("Range", "range", clock(range.fromSecond) + "–" + clock(range.toSecond))}${tile("Elapsed", "elapsedSeconds", range.elapsedSeconds, "", clock)}
              ${tile("Distance", "distanceMeters", range.distanceMeters, "km", km)}${tile("Average power", "averagePowerWatts", range.averagePowerWatts, "W")}
              ${tile("NP", "normalizedPowerWatts", range.normalizedPowerWatts, "W")}${tile("Maximum power", "maximumPowerWatts", range.maximumPowerWatts, "W")}
              ${tile("Work", "workJoules", range.workJoules, "kJ", kj)}${tile("Cadence", "averageCadenceRPM", range.averageCadenceRPM, "rpm")}
              ${tile("Heart rate", "averageHeartRateBPM", range.averageHeartRateBPM, "bpm")}</div>`;
          }
          let dragFrom = null;
          chart.addEventListener("pointerdown", event => { if (!svg) return; dragFrom = event.clientX; chart.setPointerCapture(event.pointerId); });
          chart.addEventListener("pointermove", event => {
            if (dragFrom == null) return;
            const box = chart.getBoundingClientRect();
            selection.style.display = "block";
            selection.style.left = Math.min(dragFrom, event.clientX) - box.left + "px";
            selection.style.width = Math.abs(event.clientX - dragFrom) + "px";
          });
          chart.addEventListener("pointerup", event => {
            if (dragFrom == null) return;
            const a = second(dragFrom), b = second(event.clientX);
            dragFrom = null;
            if (Math.abs(b - a) >= 1) stats(Math.min(a, b), Math.max(a, b)).catch(fail);
          });
          form.onsubmit = event => { event.preventDefault(); stats(+form.from.value, +form.to.value).catch(fail); };
          document.getElementById("zoom").onclick = () => { if (form.from.value && form.to.value) draw(+form.from.value, +form.to.value).catch(fail); };
          document.getElementById("whole").onclick = () => draw().catch(fail);
          await draw();
        }

        async function fitness() {
          const query = new URLSearchParams(location.hash.split("?")[1] || "");
          const span = query.get("window") || "90d";
          const [ftp, curve, load] = await Promise.all([api("ftp"), api("power-curve?window=" + encodeURIComponent(span)), api("weekly-load?weeks=12")]);
          const at = s => curve.watts[s - 1];
          view.innerHTML = `<h1>Fitness</h1><div class="grid">
            ${tile("FTP", "ftpWatts", ftp.ftpWatts, "W")}${tile("Method", "method", ftp.method)}${tile("Since", "effective", ftp.effective, "", age)}
            ${tile("Critical power", "criticalPowerWatts", curve.criticalPowerWatts, "W")}${tile("W′", "wPrimeJoules", curve.wPrimeJoules, "J")}
            ${tile("Best 1 min", "best.60", at(60), "W")}${tile("Best 5 min", "best.300", at(300), "W")}${tile("Best 20 min", "best.1200", at(1200), "W")}</div>
            <h2>Power curve</h2><form id="window"><label>Window<select name="window">${["42d", "90d", "365d", "36500d"].map(w => `<option${w === span ? " selected" : ""} value="${w}">${w === "36500d" ? "every ride" : w.replace("d", " days")}</option>`).join("")}</select></label></form>
            <div class="chart"><img src="/api/v1/power-curve.svg?theme=dark&window=${encodeURIComponent(span)}" alt="Best power for each duration over ${esc(span)} (${count(curve.windowRides, "ride", "rides")}): 1 min ${at(60) ?? "–"} W, 5 min ${at(300) ?? "–"} W, 20 min ${at(1200) ?? "–"} W; critical power ${curve.criticalPowerWatts ?? "–"} W"></div>
            <h2>Training load</h2><div class="chart"><img src="/api/v1/weekly-load.svg?theme=dark&weeks=12" alt="TSS per week for the 12 weeks to the newest ride; the numbers are in the table below"></div>
            <div class="scroll"><table id="load"><thead><tr><th class="text">Week from</th><th>TSS</th><th>Rides</th></tr></thead><tbody>${load.map(w => `<tr><td class="text">${esc(w.weekStart.slice(0, 10))}</td><td>${num("weekTSS", w.trainingStressScore)}</td><td>${w.rides}</td></tr>`).join("")}</tbody></table></div>
            <h2>FTP history</h2><div class="scroll"><table id="history"><thead><tr><th class="text">Date</th><th class="text">Method</th><th>FTP</th><th>CP</th><th>W′</th><th class="text">Efforts</th></tr></thead><tbody>
            ${ftp.history.map(e => `<tr><td class="text">${esc(day(e.date))}</td><td class="text">${esc(e.method)}</td><td>${num("ftpWatts", e.ftpWatts, "W")}</td><td>${num("criticalPowerWatts", e.criticalPowerWatts, "W")}</td><td>${num("wPrimeJoules", e.wPrimeJoules, "J")}</td><td class="text">${e.efforts.map(f => `<a href="#/ride/${f.workoutId}">${clock(f.durationSeconds)} ${f.watts} W</a>`).join(", ")}</td></tr>`).join("") || `<tr><td class="text" colspan="6">No FTP yet.</td></tr>`}
            </tbody></table></div>`;
          document.getElementById("window").onchange = event => { location.hash = "#/fitness?window=" + event.target.value; };
        }

        function route() {
          const hash = location.hash || "#/";
          const match = hash.match(/^#\/ride\/(\d+)/);
          (match ? ride(match[1]) : hash.startsWith("#/fitness") ? fitness() : rides()).catch(fail);
        }
        window.addEventListener("hashchange", route);
        route();
        </script>
        </body>
        </html>
        """#
}
