/// The races' pages (`WebPage.races`, `.raceNew`, `.race`, `.raceManage`).
enum RaceTemplates {
    static let list = """
        {{> head}}<h1>Races</h1>{{> error}}
        <p><a href="/races/new" id="new-race">Organise a race</a></p>
        <h2>My races</h2>
        <ul class="runs">{{#mine}}<li><a href="/races/{{id}}">{{name}}<span>{{starts}} · {{length}} · {{role}}</span></a></li>{{/mine}}</ul>
        {{^mine}}<p>None yet: find one below, or organise one.</p>{{/mine}}
        <h2>Find a race</h2>
        <form method="get" action="/races" class="filter" id="find-races">
        <label>Name <input name="q" value="{{q}}" maxlength="80"\(WebPage.invalid("q"))>\(WebPage.fieldError("q"))</label>
        <label>Near (latitude, longitude) <input name="near" value="{{near}}" placeholder="45.4642, 9.1900" maxlength="40"\(WebPage.invalid("near"))>\(WebPage.fieldError("near"))</label>
        <label>Within, km <input name="within_km" value="{{within_km}}" inputmode="decimal" placeholder="50" maxlength="6"\(WebPage.invalid("within_km"))>\(WebPage.fieldError("within_km"))</label>
        <button>Search</button></form>
        {{#searched}}<ul class="runs" id="found">{{#found}}<li><a href="/races/{{id}}">{{name}}<span>{{starts}} · {{length}}{{#away}} · {{.}}{{/away}}</span></a></li>{{/found}}</ul>
        {{^found}}<p>No open race matches. Races by invitation are found only through their link.</p>{{/found}}{{/searched}}{{> foot}}
        """

    static let new = """
        {{> head}}<h1>Organise a race</h1>{{> error}}
        <form method="post" action="/races" enctype="multipart/form-data" id="race-form">{{> csrf}}
        <label>Name <input name="name" value="{{name}}" maxlength="80" required\(WebPage.invalid("name"))>\(WebPage.fieldError("name"))</label>
        <label>Start (your time zone) <input type="datetime-local" name="starts" value="{{starts}}" required\(WebPage.invalid("starts"))>\(WebPage.fieldError("starts"))</label>
        <label>Registration closes (empty: at the start) <input type="datetime-local" name="closes" value="{{closes}}"\(WebPage.invalid("closes"))>\(WebPage.fieldError("closes"))</label>
        <fieldset><legend>Who may enrol</legend>
        <label class="choice"><input type="radio" name="access" value="open"{{#access_open}} checked{{/access_open}}> Anyone who finds it</label>
        <label class="choice"><input type="radio" name="access" value="invitation"{{#access_invitation}} checked{{/access_invitation}}> Only with its private registration link</label></fieldset>
        <label>Start, up to {{max_stages}} stages, and arrival: one "latitude, longitude" per line
        <textarea name="waypoints" rows="5" required placeholder="45.4642, 9.1900&#10;45.4700, 9.2000"\(WebPage.invalid("waypoints"))>{{waypoints}}</textarea>\(WebPage.fieldError("waypoints"))</label>
        <fieldset><legend>The course between them (at most {{max_km}} km)</legend>
        <label class="choice"><input type="radio" name="plan" value="straight"{{#plan_straight}} checked{{/plan_straight}}> Straight legs from point to point</label>
        <label class="choice"><input type="radio" name="plan" value="gpx"{{#plan_gpx}} checked{{/plan_gpx}}> The track of a GPX file (its start and end are the start and arrival)</label>
        <label class="choice"><input type="radio" name="plan" value="calculated"{{#plan_calculated}} checked{{/plan_calculated}}{{^routing}} disabled{{/routing}}> Over the streets{{^routing}} (needs the PostgreSQL store with street data){{/routing}}</label>
        \(WebPage.fieldError("plan"))</fieldset>
        <label>GPX file <input type="file" name="file" accept=".gpx"\(WebPage.invalid("file"))>\(WebPage.fieldError("file"))</label>
        \(WebPage.fieldError("path"))
        <button>Create the race</button></form>{{> foot}}
        """

    static let page = """
        {{> head}}<h1>{{name}}</h1>{{> error}}
        <p class="summary"><b id="race-start">{{starts}}</b> · {{length}} · {{stages}}</p>
        {{#postponed}}<p class="due" role="status">Postponed: it was to start {{.}}.</p>{{/postponed}}
        <p>{{access_text}} · {{closes}}</p>
        {{#bib}}<p class="bib" id="my-bib">You run with bib <b>{{.}}</b>: {{entry_status}}.</p>
        {{#can_withdraw}}<form method="post" action="/races/{{id}}/withdraw">{{> csrf}}<button>Withdraw</button></form>{{/can_withdraw}}{{/bib}}
        {{#can_enrol}}<form method="post" action="/races/{{id}}/enrol" id="enrol">{{> csrf}}{{#code}}<input type="hidden" name="code" value="{{.}}">{{/code}}
        <button>Participate</button></form><p class="note">Your name and bib are shown to everyone who sees the race.</p>{{/can_enrol}}
        {{#signed_in}}{{^organiser}}<form method="post" action="/races/{{id}}/observe" id="observe">{{> csrf}}{{#code}}<input type="hidden" name="code" value="{{.}}">{{/code}}
        {{#observer}}<input type="hidden" name="on" value="0"><button>Stop observing</button>{{/observer}}{{^observer}}<button>Observe</button>{{/observer}}
        </form>{{/organiser}}{{/signed_in}}
        {{#login}}<p><a href="{{.}}">Log in</a> to participate in this race or to be told when it changes.</p>{{/login}}
        {{#organiser}}<p><a href="/races/{{id}}/manage" id="manage">Manage this race</a></p>{{/organiser}}
        <div id="map" data-tiles="{{tiles}}" data-attribution="{{attribution}}"></div>
        <p><span id="live">Live updates need JavaScript</span> · <span id="counts"></span></p>
        <div id="density" aria-label="How the runners spread along the course"></div>
        <div class="wide"><table id="board"><thead><tr><th>#</th><th>Bib</th><th>Name</th><th>Distance</th><th>Gap</th><th>Pace</th>
        <th>Last fix</th><th>Gun</th><th>Net</th></tr></thead>
        <tbody>{{#rows}}<tr{{#dq}} class="dq"{{/dq}}><td>{{place}}</td><td>{{bib}}</td><td>{{name}}</td><td>{{distance}}</td><td>{{gap}}</td>
        <td>{{pace}}</td><td>{{last}}</td><td>{{gun}}</td><td>{{net}}</td></tr>{{/rows}}</tbody></table></div>
        {{^has_rows}}<p id="no-runners">No runner is on the course yet: runners appear once an organiser marks them present.</p>{{/has_rows}}
        <form id="follow-form" class="row"><label>Follow bibs (up to 10, with commas) <input id="follow" inputmode="numeric" maxlength="60"></label>
        <button>Follow</button></form>
        <script type="application/json" id="race-data">{{{data}}}</script>
        <script src="{{assets.leaflet_js}}"></script><script src="{{assets.race_js}}"></script>{{> foot}}
        """

    static let manage = """
        {{> head}}<h1>Manage {{name}}</h1>{{> error}}{{#notice}}<p class="notice" role="status">{{.}}</p>{{/notice}}
        <p><a href="/races/{{id}}">The race's page</a>{{#open}} (anyone may open it: share it){{/open}} · {{starts}} · {{length}}</p>
        {{#invite}}<p>The registration link (only those who have it can see and enrol):</p><p class="code-link"><code id="invite-link">{{.}}</code></p>{{/invite}}
        <h2>Runners ({{count}})</h2>
        <div class="wide"><table id="runners"><tr><th>Bib</th><th>Name</th><th>Status, and a corrected gun time (h:mm:ss; empty: as timed)</th></tr>
        {{#runners}}<tr id="runner-{{bib}}"><td>{{bib}}</td><td>{{name}}</td><td><form method="post" action="/races/{{race}}/runners/{{bib}}" class="row">{{> csrf}}
        <select name="status" aria-label="Status of bib {{bib}}">{{#statuses}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/statuses}}</select>
        <input name="corrected" value="{{corrected}}" placeholder="{{timed}}" maxlength="9" aria-label="Corrected gun time of bib {{bib}}">
        <button>Save</button></form></td></tr>{{/runners}}</table></div>
        {{^runners}}<p>Nobody has enrolled yet.</p>{{/runners}}
        <h2>Co-organisers</h2><ul>{{#organisers}}<li>{{display_name}} ({{email}})</li>{{/organisers}}</ul>
        <form method="post" action="/races/{{id}}/organisers">{{> csrf}}
        <label>Add one by the e-mail of their Pacer account <input type="email" name="email" required\(WebPage.invalid("email"))>\(WebPage.fieldError("email"))</label>
        <button>Add</button></form>
        <h2>Postpone</h2>
        <form method="post" action="/races/{{id}}/postpone">{{> csrf}}
        <label>New start ({{timezone}}) <input type="datetime-local" name="starts" value="{{starts_field}}" required\(WebPage.invalid("starts"))>\(WebPage.fieldError("starts"))</label>
        <label>Registration closes (empty: at the start) <input type="datetime-local" name="closes"\(WebPage.invalid("closes"))>\(WebPage.fieldError("closes"))</label>
        <button>Postpone and tell everyone</button></form>
        <h2>Cancel</h2>
        <form method="post" action="/races/{{id}}/delete">{{> csrf}}<button>Delete the race and tell everyone</button></form>{{> foot}}
        """

    static let style = "#density{display:flex;height:1.2em;gap:1px;margin:.4em 0}#density span{flex:1;background:var(--accent)}"
        + "tr.dq td{color:var(--muted);text-decoration:line-through}.bib b{font-size:1.4em}.code-link code{word-break:break-all}"
        + ".race-marker{background:var(--accent);color:#fff;border-radius:1em;text-align:center;font:bold 11px/20px sans-serif}"
        + ".race-marker.dq{background:#888}.race-marker.followed{background:#b00}fieldset{border:1px solid var(--line);margin:.8em 0}"
        + "label.choice{display:flex;gap:.5em;align-items:center}label.choice input{display:inline;width:auto}"
}
