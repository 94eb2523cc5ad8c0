/// The run page's script, served as /assets/pacer/run.js (the page has no inline script): draws
/// the map and both charts from the page's JSON data block, then sets
/// `document.body.dataset.complete = "1"`, the flag the browser flows and tools/bench-web wait for
/// (`window.pacerCompleteMs` says when, from navigation start).
enum RunScript {
    /// Both pages' charts in the system's scheme: light text and grid lines on a dark page.
    private static let chartScheme = #"""
          var dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
          if (dark) {
            Chart.defaults.color = '#c4c8ce';
            Chart.defaults.borderColor = 'rgba(255, 255, 255, 0.15)';
          }
        """#

    /// The map both pages draw on: the Leaflet map in `#map`, with the configured tiles (none in
    /// the "none" mode), and `text()`, which escapes what goes into a tooltip.
    private static let mapSetup = #"""
          var element = document.getElementById('map');
          function text(value) {
            var span = document.createElement('span');
            span.textContent = value;
            return span.innerHTML;
          }
          var map = L.map(element, { zoomSnap: 0.25 });
          if (element.dataset.tiles) {
            L.tileLayer(element.dataset.tiles, { maxZoom: 19, attribution: text(element.dataset.attribution || '') }).addTo(map);
          }
        """#

    static let source = #"""
        (function () {
          'use strict';
          var data = JSON.parse(document.getElementById('run-data').textContent);
          // The track comes flat (lat, lon, lat, lon, …): Leaflet takes pairs.
          var flat = data.track;
          data.track = [];
          for (var i = 0; i + 1 < flat.length; i += 2) { data.track.push([flat[i], flat[i + 1]]); }
        \#(mapSetup)
          if (data.track.length > 1) {
            map.fitBounds(L.latLngBounds(data.track), { padding: [16, 16] });
          } else {
            map.setView(data.track[0] || [0, 0], data.track.length ? 16 : 2);
          }
          var track = L.polyline(data.track, { color: '#d2312d', weight: 4, opacity: 0.9 }).addTo(map);
          data.marks.forEach(function (mark) {
            L.circleMarker([mark[0], mark[1]], { radius: 5, color: '#222', weight: 1, fillColor: '#fff', fillOpacity: 1 })
              .bindTooltip(mark[2] + ' ' + data.unit).addTo(map);
          });
          if (data.track.length) {
            var last = data.track[data.track.length - 1];
            L.circleMarker(data.track[0], { radius: 8, color: '#fff', weight: 2, fillColor: '#1a8f3c', fillOpacity: 1 })
              .bindTooltip('Start').addTo(map);
            L.circleMarker(last, { radius: 8, color: '#fff', weight: 2, fillColor: '#111', fillOpacity: 1 })
              .bindTooltip('Finish').addTo(map);
          }
          window.pacerMap = { map: map, track: track };

        \#(chartScheme)
          function minutes(seconds) {
            var whole = Math.round(seconds);
            return Math.floor(whole / 60) + ':' + String(whole % 60).padStart(2, '0');
          }
          function chart(id, values, color, options) {
            var canvas = document.getElementById(id);
            if (!canvas) { return null; }
            var points = data.distance.map(function (at, i) { return { x: at, y: values[i] }; });
            return new Chart(canvas, {
              type: 'line',
              data: { datasets: [{ data: points, borderColor: color, backgroundColor: color, borderWidth: 1.5, pointRadius: 0 }] },
              options: {
                animation: false, parsing: false, normalized: true, responsive: true, maintainAspectRatio: false,
                plugins: { legend: { display: false }, tooltip: { intersect: false, mode: 'index' } },
                scales: {
                  x: { type: 'linear', min: 0, title: { display: true, text: data.unit } },
                  y: options
                }
              }
            });
          }
          // The value axes span the body of the data (the page's paceAxis and hrAxis): an outlier is clipped at the edge.
          var paceAxis = data.paceAxis || [], hrAxis = data.hrAxis || [];
          var pace = chart('pace-chart', data.pace, dark ? '#6fa0ff' : '#1f5fbf', {
            reverse: true, min: paceAxis[0], max: paceAxis[1], title: { display: true, text: 'min/' + data.unit }, ticks: { callback: minutes }
          });
          var heart = chart('hr-chart', data.hr, dark ? '#ff6b5b' : '#c0392b', {
            min: hrAxis[0], max: hrAxis[1], title: { display: true, text: 'bpm' }
          });
          var elevation = data.elevation.length ? chart('elevation-chart', data.elevation, dark ? '#8fd18f' : '#2e7d32', {
            title: { display: true, text: data.heightUnit }
          }) : null;
          window.pacerCharts = { pace: pace, hr: heart, elevation: elevation };
          // The next frame: the map's line and both canvases are painted by then.
          // pacerCompleteMs: milliseconds from navigation start, for tools/bench-web.
          requestAnimationFrame(function () {
            window.pacerCompleteMs = performance.now();
            document.body.dataset.complete = '1';
          });
        })();
        """#

    /// The heart-rate page's script (/assets/pacer/heart.js): average and maximum heart rate per
    /// run from the page's data block, then the same `complete` flag as the run page.
    static let heart = #"""
        (function () {
          'use strict';
          var data = JSON.parse(document.getElementById('heart-data').textContent);
        \#(chartScheme)
          function line(label, values, color) {
            return { label: label, data: values, borderColor: color, backgroundColor: color, borderWidth: 1.5, pointRadius: 2, spanGaps: true };
          }
          var canvas = document.getElementById('runs-chart');
          // No run with heart rate: the page says what to do instead of drawing an empty chart.
          var runs = canvas && new Chart(canvas, {
            type: 'line',
            data: { labels: data.labels, datasets: [line('Average', data.average, dark ? '#ff6b5b' : '#c0392b'),
              line('Maximum', data.maximum, dark ? '#ffb4a8' : '#7f1d1d')] },
            options: {
              animation: false, responsive: true, maintainAspectRatio: false,
              plugins: { legend: { display: true, position: 'bottom' }, tooltip: { intersect: false, mode: 'index' } },
              scales: { y: { title: { display: true, text: 'bpm' } } }
            }
          });
          window.pacerCharts = { runs: runs };
          requestAnimationFrame(function () {
            window.pacerCompleteMs = performance.now();
            document.body.dataset.complete = '1';
          });
        })();
        """#

    /// The statistics page's script (/assets/pacer/stats.js): distance per week and per month
    /// as bars, in the account's unit, then the same `complete` flag as the run page.
    static let volume = #"""
        (function () {
          'use strict';
          var data = JSON.parse(document.getElementById('volume-data').textContent);
        \#(chartScheme)
          var color = dark ? '#6fa0ff' : '#1f5fbf';
          function bars(id, labels, values) {
            var canvas = document.getElementById(id);
            return canvas && new Chart(canvas, {
              type: 'bar',
              data: { labels: labels, datasets: [{ label: data.unit, data: values, backgroundColor: color }] },
              options: {
                animation: false, responsive: true, maintainAspectRatio: false,
                plugins: { legend: { display: false } },
                scales: { y: { beginAtZero: true, title: { display: true, text: data.unit } } }
              }
            });
          }
          window.pacerCharts = { weeks: bars('weeks-chart', data.weeks, data.weekDistance),
            months: bars('months-chart', data.months, data.monthDistance) };
          requestAnimationFrame(function () {
            window.pacerCompleteMs = performance.now();
            document.body.dataset.complete = '1';
          });
        })();
        """#

    /// The alert page's script (/assets/pacer/alert.js): the alert's last positions on the run
    /// page's Leaflet map (tiles as the run page's, none in the "none" mode), older ones small and
    /// joined by a line, the newest large with its time and age. The page reloads itself every
    /// 10 s: a view the reader moved or zoomed is kept across reloads (sessionStorage, this tab
    /// only). Then sets `document.body.dataset.complete = "1"`, as the run page does.
    static let alert = #"""
        (function () {
          'use strict';
          var data = JSON.parse(document.getElementById('alert-data').textContent);
        \#(mapSetup)
          var points = data.positions;
          var newest = points[points.length - 1];
          if (points.length > 1) {
            L.polyline(points, { color: '#b00', weight: 3, opacity: 0.6, dashArray: '6 6' }).addTo(map);
          }
          points.slice(0, -1).forEach(function (point, i) {
            L.circleMarker(point, { radius: 4, color: '#fff', weight: 1, fillColor: '#b00', fillOpacity: 0.6 })
              .bindTooltip(text(data.times[i])).addTo(map);
          });
          var last = L.circleMarker(newest, { radius: 10, color: '#fff', weight: 3, fillColor: '#b00', fillOpacity: 1 })
            .bindTooltip('Newest position, ' + text(data.times[data.times.length - 1]), { permanent: true, direction: 'auto' })
            .addTo(map);
          var key = 'pacer-alert-view:' + location.pathname;
          var kept = null;
          try { kept = JSON.parse(sessionStorage.getItem(key) || 'null'); } catch (e) { kept = null; }
          if (kept && typeof kept.zoom === 'number') {
            map.setView([kept.lat, kept.lon], kept.zoom);
          } else if (points.length > 1) {
            map.fitBounds(L.latLngBounds(points), { padding: [48, 48], maxZoom: 17 });
          } else {
            map.setView(newest, 16);
          }
          // Only a view the reader chose (a drag, a pinch, the wheel, the zoom buttons) is kept;
          // until then each reload shows every position.
          var touched = false;
          ['mousedown', 'touchstart', 'wheel', 'keydown'].forEach(function (name) {
            element.addEventListener(name, function () { touched = true; }, { passive: true });
          });
          map.on('moveend', function () {
            if (!touched) { return; }
            var centre = map.getCenter();
            try { sessionStorage.setItem(key, JSON.stringify({ lat: centre.lat, lon: centre.lng, zoom: map.getZoom() })); } catch (e) { }
          });
          window.pacerMap = { map: map, newest: last };
          requestAnimationFrame(function () {
            window.pacerCompleteMs = performance.now();
            document.body.dataset.complete = '1';
          });
        })();
        """#
}
