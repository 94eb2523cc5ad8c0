/// The dashboard's script, served by `Assets` as /assets/pacer/dashboard.js beside the run
/// pages' scripts and Leaflet.
enum DashboardScript {
    /// Draws each card's map, and applies the stream's updates: a `device` event replaces that
    /// card's text (rendered by the server, escaped there) and moves its map and trail (lines of
    /// points, one polyline with a gap wherever the runner entered a private place); a `consent`
    /// event reloads the page (a runner came or went).
    static let source = """
        "use strict";
        (function () {
          var maps = {};
          var tiles = document.getElementById("cards");
          // Leaflet puts the attribution in as HTML: the setting is shown as text.
          function text(value) {
            var span = document.createElement("span");
            span.textContent = value;
            return span.innerHTML;
          }
          function draw(id, data) {
            var el = document.getElementById("map-" + id);
            if (!el) return;
            el.dataset.map = data ? JSON.stringify(data) : "";
            if (!data) {
              // No position to show (none yet, or a private place): no map, and nothing of the last one left in it.
              if (maps[id]) { maps[id].map.remove(); delete maps[id]; }
              el.hidden = true;
              return;
            }
            el.hidden = false;
            if (!window.L) { el.textContent = "Map unavailable; last position " + data.lat.toFixed(5) + ", " + data.lon.toFixed(5); return; }
            var m = maps[id];
            if (!m) {
              var map = L.map(el).setView([data.lat, data.lon], 15);
              // The server's tile setting (none: the trail on a plain background).
              if (tiles.dataset.tiles) L.tileLayer(tiles.dataset.tiles, {maxZoom: 19, attribution: text(tiles.dataset.attribution || "")}).addTo(map);
              m = maps[id] = {
                map: map,
                trail: L.polyline([], {weight: 3}).addTo(map),
                ring: L.circle([data.lat, data.lon], {radius: 1, weight: 1}).addTo(map),
                dot: L.circleMarker([data.lat, data.lon], {radius: 7}).addTo(map)
              };
            }
            m.dot.setLatLng([data.lat, data.lon]);
            m.ring.setLatLng([data.lat, data.lon]);
            m.ring.setRadius(data.accuracy_m || 1);
            m.trail.setLatLngs(data.trail || []);
            m.map.panTo([data.lat, data.lon]);
          }
          function apply(card) {
            var section = document.getElementById("card-" + card.id);
            if (!section) { location.reload(); return; }
            document.getElementById("body-" + card.id).innerHTML = card.html;
            section.className = card.alert_open ? "card alert-open" : "card";
            if (card.alert_open) section.parentNode.insertBefore(section, section.parentNode.firstChild);
            draw(card.id, card.map);
          }
          document.querySelectorAll(".map").forEach(function (el) {
            draw(el.id.slice(4), el.dataset.map ? JSON.parse(el.dataset.map) : null);
          });
          var live = document.getElementById("live");
          var source = new EventSource("/watch/events");
          source.addEventListener("device", function (event) { apply(JSON.parse(event.data)); });
          source.addEventListener("consent", function () { location.reload(); });
          source.onopen = function () { live.textContent = "live"; };
          source.onerror = function () { live.textContent = "reconnecting\\u2026"; };
        })();

        """
}
