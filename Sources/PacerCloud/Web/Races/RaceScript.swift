/// The race page's script, served as /assets/pacer/race.js: the course and a numbered marker
/// per runner on the map, the leaderboard and the density bar, from the live stream's frames.
/// Everything a runner typed (their name) goes in as text, never as HTML.
enum RaceScript {
    static let source = """
        "use strict";
        (function () {
          var data = JSON.parse(document.getElementById("race-data").textContent);
          var mapEl = document.getElementById("map");
          var live = document.getElementById("live");
          var counts = document.getElementById("counts");
          var board = document.querySelector("#board tbody");
          var density = document.getElementById("density");
          var followInput = document.getElementById("follow");
          var unit = data.unit === "mi" ? 1609.344 : 1000;
          var map = null, markers = {}, followed = [], frame = null, receivedAt = 0, source = null;

          function text(value) { var span = document.createElement("span"); span.textContent = value; return span.innerHTML; }
          function distance(m) { return m == null ? "" : (m / unit).toFixed(2) + " " + data.unit; }
          function clock(ms) {
            var t = Math.round(ms / 1000), h = Math.floor(t / 3600), m = Math.floor(t / 60) % 60, s = t % 60;
            var mm = h > 0 && m < 10 ? "0" + m : "" + m, ss = s < 10 ? "0" + s : "" + s;
            return h > 0 ? h + ":" + mm + ":" + ss : mm + ":" + ss;
          }
          function pace(sPerKm) {
            if (sPerKm == null || !isFinite(sPerKm)) return "";
            var s = Math.round(sPerKm * unit / 1000);
            return Math.floor(s / 60) + ":" + (s % 60 < 10 ? "0" : "") + (s % 60) + " /" + data.unit;
          }
          // The frame's age on the server's clock, plus the time since it arrived here.
          function age(lastMs) {
            if (lastMs == null || !frame) return "";
            var seconds = Math.max(0, Math.round((frame.made_ms - lastMs + (Date.now() - receivedAt)) / 1000));
            return seconds < 90 ? seconds + " s ago" : Math.round(seconds / 60) + " min ago";
          }
          function setupMap() {
            if (!window.L) { mapEl.textContent = "Map unavailable"; return; }
            map = L.map(mapEl);
            if (mapEl.dataset.tiles) L.tileLayer(mapEl.dataset.tiles, {maxZoom: 19, attribution: text(mapEl.dataset.attribution || "")}).addTo(map);
            var course = L.polyline(data.path, {weight: 4}).addTo(map);
            data.waypoints.forEach(function (p, i) {
              L.circleMarker(p, {radius: 5, weight: 2}).addTo(map)
                .bindTooltip(i === 0 ? "Start" : i === data.waypoints.length - 1 ? "Arrival" : "Stage " + i);
            });
            map.fitBounds(course.getBounds(), {padding: [10, 10]});
          }
          function drawMarkers(rows) {
            if (!map) return;
            var seen = {};
            rows.forEach(function (row) {
              if (row.lat == null || row.lon == null) return;
              seen[row.bib] = true;
              var cls = "race-marker" + (row.status === "disqualified" ? " dq" : "") + (followed.indexOf(row.bib) >= 0 ? " followed" : "");
              var icon = L.divIcon({className: cls, html: String(row.bib), iconSize: [24, 20]});
              var m = markers[row.bib];
              if (!m) {
                m = markers[row.bib] = L.marker([row.lat, row.lon], {icon: icon, keyboard: false}).addTo(map);
                m.bindTooltip("");
              } else {
                m.setLatLng([row.lat, row.lon]);
                m.setIcon(icon);
              }
              m.getElement() && (m.getElement().dataset.bib = row.bib);
              m.setTooltipContent(text(row.bib + " " + row.name + (row.last_ms != null ? ", last fix " + age(row.last_ms) : "")));
            });
            Object.keys(markers).forEach(function (bib) {
              if (!seen[bib]) { map.removeLayer(markers[bib]); delete markers[bib]; }
            });
          }
          function cell(tr, value) { var td = document.createElement("td"); td.textContent = value; tr.appendChild(td); }
          function drawBoard(rows) {
            board.textContent = "";
            rows.forEach(function (row) {
              var tr = document.createElement("tr");
              if (row.status === "disqualified") tr.className = "dq";
              tr.dataset.bib = row.bib;
              cell(tr, row.place != null ? row.place : row.status === "disqualified" ? "DQ" : "\\u2013");
              cell(tr, row.bib); cell(tr, row.name); cell(tr, distance(row.progress_m));
              cell(tr, row.gap_ms ? "+" + clock(row.gap_ms) : row.gap_m >= 1 ? "\\u2212" + distance(row.gap_m) : "");
              cell(tr, pace(row.pace_s_km)); cell(tr, row.gun_ms != null ? "" : age(row.last_ms));
              cell(tr, row.gun_ms != null ? clock(row.gun_ms) : ""); cell(tr, row.net_ms != null ? clock(row.net_ms) : "");
              board.appendChild(tr);
            });
            var none = document.getElementById("no-runners");
            if (none) none.hidden = rows.length > 0;
          }
          function drawDensity(bins) {
            density.textContent = "";
            var top = Math.max.apply(null, bins.concat([1]));
            bins.forEach(function (n) {
              var bar = document.createElement("span");
              bar.style.opacity = n === 0 ? "0.08" : String(0.25 + 0.75 * n / top);
              bar.title = n + " runner" + (n === 1 ? "" : "s");
              density.appendChild(bar);
            });
          }
          var followRows = [];
          function draw() {
            if (!frame) return;
            counts.textContent = frame.present + " present, " + frame.started + " on the course, " + frame.finished + " finished";
            var rows = frame.leaders.slice();
            followRows.forEach(function (row) {
              if (!rows.some(function (r) { return r.bib === row.bib; })) rows.push(row);
            });
            drawBoard(rows);
            drawMarkers(frame.markers || followRows);
            drawDensity(frame.density || []);
          }
          function connect() {
            if (source) source.close();
            var query = [];
            if (data.code) query.push("code=" + encodeURIComponent(data.code));
            if (followed.length) query.push("follow=" + followed.join(","));
            source = new EventSource("/races/" + data.id + "/live" + (query.length ? "?" + query.join("&") : ""));
            source.addEventListener("frame", function (event) {
              frame = JSON.parse(event.data); receivedAt = Date.now(); draw();
            });
            source.addEventListener("follow", function (event) {
              var f = JSON.parse(event.data);
              followRows = f.rows; draw();
            });
            source.onopen = function () { live.textContent = "live"; };
            source.onerror = function () { live.textContent = "reconnecting\\u2026"; };
          }
          document.getElementById("follow-form").addEventListener("submit", function (event) {
            event.preventDefault();
            followed = followInput.value.split(",").map(function (s) { return parseInt(s.trim(), 10); })
              .filter(function (n) { return n > 0; }).slice(0, 10);
            followRows = [];
            connect();
          });
          setupMap();
          if (data.frame) { frame = data.frame; receivedAt = Date.now(); draw(); }
          live.textContent = "connecting\\u2026";
          connect();
          // "Last fix N s ago" ages between frames too.
          setInterval(function () { if (frame) drawBoard(frame.leaders.concat(followRows.filter(function (row) {
            return !frame.leaders.some(function (r) { return r.bib === row.bib; }); }))); }, 5000);
        })();

        """
}
