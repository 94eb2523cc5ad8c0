/// The pages of managing a run (`RunManagementController`) and of seeing another's run (a share
/// link, or a monitor): `WebPage.runEdit`, `.runDelete`, `.runShareLink`, `.runShared`.
enum RunManagementTemplates {
    static let edit = """
        {{> head}}<h1>Edit this run</h1><p class="summary">{{heading}}</p>{{> error}}
        <form method="post" action="/runs/{{run_id}}/edit" id="run-form">{{> csrf}}
        <label>Name <input name="title" value="{{title}}" maxlength="100" placeholder="{{default_title}}"\(WebPage.invalid("title"))>\(WebPage.fieldError("title"))</label>
        <label>Sport \(WebPage.fieldError("sport"))<select name="sport"\(WebPage.invalid("sport"))>{{#sports}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/sports}}</select></label>
        {{#has_shoes}}<label>Shoes \(WebPage.fieldError("shoe"))<select name="shoe"\(WebPage.invalid("shoe"))><option value=""{{#no_shoe}} selected{{/no_shoe}}>None</option>
        {{#shoes}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/shoes}}</select></label>{{/has_shoes}}
        <label>Notes <textarea name="notes" rows="5" maxlength="4000"\(WebPage.invalid("notes"))>{{notes}}</textarea>\(WebPage.fieldError("notes"))</label>
        <fieldset\(WebPage.invalid("visibility"))><legend>Who sees it</legend>\(WebPage.fieldError("visibility"))
        {{#visibilities}}<label class="choice"><input type="radio" name="visibility" value="{{value}}"{{#selected}} checked{{/selected}}> {{label}}</label>{{/visibilities}}
        </fieldset>
        <button>Save</button></form>
        <h2>Share link</h2>
        {{#shared}}<p>A share link is live: anyone who has it sees this run's map and charts, and nothing of your account.
        Its address was shown once, when it was made; make a new one to see an address again (the old one then stops working).</p>
        <form method="post" action="/runs/{{run_id}}/share/end">{{> csrf}}<button>End the share link</button></form>{{/shared}}
        {{^shared}}<p>No share link. A link shows this run's map and charts to anyone who has it, and nothing of your account.</p>{{/shared}}
        <form method="post" action="/runs/{{run_id}}/share">{{> csrf}}<button>{{#shared}}Make a new share link{{/shared}}{{^shared}}Make a share link{{/shared}}</button></form>
        <h2>Delete</h2><p><a href="/runs/{{run_id}}/delete">Delete this run…</a></p>
        <p><a href="/runs/{{run_id}}">Back to the run</a></p>{{> foot}}
        """

    static let delete = """
        {{> head}}<h1>Delete this run?</h1><p class="summary">{{heading}}</p>{{> error}}
        <p>{{summary}}. Its track, charts and figures go, and its share link stops working. It cannot be undone.</p>
        <form method="post" action="/runs/{{run_id}}/delete">{{> csrf}}<button>Delete this run</button></form>
        <p><a href="/runs/{{run_id}}">Keep it</a></p>{{> foot}}
        """

    static let shareLink = """
        {{> head}}<h1>Share link made</h1>
        <p>Anyone with this address sees the map and charts of {{heading}}, and nothing of your account. Copy it now: it is shown only
        this once (Pacer keeps only a fingerprint of it).</p>
        <p class="link" id="share-link"><a href="{{link}}">{{link}}</a></p>
        <p><a href="/runs/{{run_id}}/edit">Back to the run's settings</a></p>{{> foot}}
        """

    /// A run seen by someone other than its runner: no account, device, downloads or settings.
    static let shared = """
        {{> head}}<h1>{{heading}}</h1>
        <p class="summary">{{sport}} · {{date}}</p>
        <p class="summary">{{distance}} · {{duration}} · {{pace}}{{#elevation_gain}} · {{.}}{{/elevation_gain}}{{#hr_avg}} · {{.}}{{/hr_avg}}</p>
        {{#notes}}<p class="notes">{{.}}</p>{{/notes}}
        <div id="map" data-tiles="{{tiles}}" data-attribution="{{attribution}}"></div>
        <h2>Pace</h2><div class="chart"><canvas id="pace-chart" aria-label="Pace against distance"></canvas></div>
        {{#has_elevation}}<h2>Elevation</h2><div class="chart"><canvas id="elevation-chart" aria-label="Elevation against distance"></canvas></div>{{/has_elevation}}
        <h2>Heart rate</h2>{{^has_hr}}<p>No heart-rate readings in this run.</p>{{/has_hr}}
        <div class="chart"><canvas id="hr-chart" aria-label="Heart rate against distance"></canvas></div>
        <h2>Splits</h2><table><tr><th>{{unit}}</th><th>Time</th><th>Pace</th><th>HR</th></tr>
        {{#splits}}<tr><td>{{km}}</td><td>{{time}}</td><td>{{pace}}</td><td>{{hr}}</td></tr>{{/splits}}</table>
        {{#split_km}}<p class="note">Splits of {{.}} {{unit}}: the run is longer than 500 {{unit}}.</p>{{/split_km}}
        <script type="application/json" id="run-data">{{{data}}}</script>
        <script src="{{assets.leaflet_js}}"></script><script src="{{assets.chart_js}}"></script>
        <script src="{{assets.run_js}}"></script>{{> foot}}
        """

    static let style = "textarea{display:block;width:100%;box-sizing:border-box;font-size:1.1em;padding:.4em;font-family:inherit}"
        + "label.choice{display:flex;gap:.5em;align-items:center;margin:.4em 0}label.choice input{display:inline;width:auto}"
        + ".notes{white-space:pre-wrap}.link{word-break:break-all;font-family:monospace}"
}
