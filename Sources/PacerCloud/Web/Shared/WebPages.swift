import CloudModel
import Crypto
import Foundation
import Hummingbird
import Mustache

/// The account pages, server-rendered from Mustache templates compiled into the binary (no
/// resource files to lose): readable on a phone, no script at all, one stylesheet allowed by
/// its hash, and the security headers every HTML answer has (`SecurityHeaders`).
enum WebPage: String, CaseIterable, Sendable {
    case signup, confirm, login, reset, resetPassword = "reset_password", account, accountDelete = "account_delete", message, resume
    case devices, deviceUnlink = "device_unlink", importFile = "import", importResult = "import_result"
    case runs, run, stats, heart
    case runEdit = "run_edit", runDelete = "run_delete", runShareLink = "run_share_link", runShared = "run_shared", calendar, shoes
    case plan, planSession = "plan_session"
    case races, raceNew = "race_new", race, raceManage = "race_manage"

    /// The page's template; `{{> head}}` and `{{> foot}}` frame each one. `{{ }}` escapes HTML.
    var template: String {
        switch self {
        case .signup:
            return """
                {{> head}}<h1>Create an account</h1>{{> error}}
                <form method="post" action="/signup">{{> csrf}}
                <label>E-mail <input type="email" name="email" value="{{email}}" required autocomplete="username"\(Self.invalid("email"))>\(Self.fieldError("email"))</label>
                <label>Your name <input name="display_name" value="{{display_name}}" maxlength="64" autocomplete="name"\(Self.invalid("display_name"))>\(Self.fieldError("display_name"))</label>
                <label>Time zone (where you run: your weeks, days and times) <select name="timezone"\(Self.invalid("timezone"))>{{> timezones}}</select>\(Self.fieldError("timezone"))</label>
                <label>Password (12 characters or more) <input type="password" name="password" required minlength="12" autocomplete="new-password"\(Self.invalid("password"))>\(Self.fieldError("password"))</label>
                <button>Create account</button></form>
                <p><a href="/login">I have an account</a></p>{{> foot}}
                """
        case .confirm:
            return """
                {{> head}}<h1>Confirm your address</h1>{{> error}}
                <form method="post" action="/confirm">{{> csrf}}<input type="hidden" name="token" value="{{token}}">
                <button>Confirm</button></form>{{> foot}}
                """
        case .login:
            return """
                {{> head}}<h1>Log in</h1>{{#notice}}<p class="notice">{{notice}}</p>{{/notice}}{{> error}}
                <form method="post" action="/login">{{> csrf}}{{#next}}<input type="hidden" name="next" value="{{next}}">{{/next}}
                {{#resume}}<input type="hidden" name="resume" value="{{resume}}">{{/resume}}
                <label>E-mail <input type="email" name="email" value="{{email}}" required autocomplete="username"\(Self.invalid("email"))>\(Self.fieldError("email"))</label>
                <label>Password <input type="password" name="password" required autocomplete="current-password"\(Self.invalid("password"))>\(Self.fieldError("password"))</label>
                <button>Log in</button></form>
                <p><a href="/signup">Create an account</a> · <a href="/reset">Forgot the password?</a></p>{{> foot}}
                """
        case .reset:
            return """
                {{> head}}<h1>Reset the password</h1>{{> error}}
                <form method="post" action="/reset">{{> csrf}}
                <label>E-mail <input type="email" name="email" value="{{email}}" required autocomplete="username"\(Self.invalid("email"))>\(Self.fieldError("email"))</label>
                <button>Send me a link</button></form>{{> foot}}
                """
        case .resetPassword:
            return """
                {{> head}}<h1>Choose a new password</h1>{{> error}}
                <form method="post" action="/reset/password">{{> csrf}}<input type="hidden" name="token" value="{{token}}">
                <label>New password (12 characters or more) <input type="password" name="password" required minlength="12" autocomplete="new-password"\(Self.invalid("password"))>\(Self.fieldError("password"))</label>
                <button>Set the password</button></form>{{> foot}}
                """
        case .account:
            return """
                {{> head}}<h1>{{display_name}}</h1>{{> error}}
                <dl><dt>E-mail</dt><dd>{{email}}</dd><dt>Time zone</dt><dd>{{timezone}}</dd></dl>
                <h2>Settings</h2>
                <form method="post" action="/account/settings">{{> csrf}}
                <label>Time zone (your weeks, days and times) <select name="timezone" required\(Self.invalid("timezone"))>{{> timezones}}</select>\(Self.fieldError("timezone"))</label>
                <label>Maximum heart rate, bpm (your heart-rate zones; empty: \(HeartRateZones.defaultMaximum))
                <input name="max_hr" value="{{max_hr}}" inputmode="numeric" maxlength="3"\(Self.invalid("max_hr"))>\(Self.fieldError("max_hr"))</label>
                <label>Distances in (every page, e-mail and your device) <select name="units"\(Self.invalid("units"))>
                <option value="km"{{#units_km}} selected{{/units_km}}>Kilometres</option><option value="mi"{{#units_mi}} selected{{/units_mi}}>Miles</option></select>\(Self.fieldError("units"))</label>
                <button>Save settings</button></form>
                <h2>My devices</h2>{{#devices}}<p>{{name}}</p>{{/devices}}{{^devices}}<p>No device yet.</p>{{/devices}}
                <p><a href="/devices">Link a device, or unlink one</a></p>
                <p><a href="/import">Import a run</a> (GPX, TCX or FIT) · <a href="/monitoring">Who watches over me</a></p>
                <form method="post" action="/logout">{{> csrf}}<button>Log out</button></form>
                <p><a href="/account/delete">Delete my account</a></p>{{> foot}}
                """
        case .accountDelete:
            return """
                {{> head}}<h1>Delete my account</h1>{{> error}}
                <p>This deletes your account, every device of it, and all their runs, positions and alerts. It cannot be undone.</p>
                <form method="post" action="/account/delete">{{> csrf}}
                <label>Your password <input type="password" name="password" required autocomplete="current-password"\(Self.invalid("password"))>\(Self.fieldError("password"))</label>
                <button>Delete everything</button></form>
                <p><a href="/account">Keep my account</a></p>{{> foot}}
                """
        case .devices:
            return """
                {{> head}}<h1>My devices</h1>{{> error}}
                {{#link}}<p>On the device, within 10 minutes (until {{until}}), type this code; it works once:</p>
                <p class="code" id="link-code">{{code}}</p>
                <p>with <code>pacerctl cloud link {{base}} {{code}}</code></p>{{/link}}
                {{#devices}}<div class="device"><h2>{{name}}</h2><p>Last seen: {{last_seen}}</p>
                {{#linked}}<p><a href="/devices/{{id}}/unlink">Unlink {{name}}</a></p>{{/linked}}{{^linked}}<p>Unlinked: it uploads nothing until it is linked again.</p>{{/linked}}</div>{{/devices}}
                {{^devices}}<p>No device yet.</p>{{/devices}}
                <form method="post" action="/devices/link">{{> csrf}}<button>Link a device</button></form>
                <p><a href="/account">My account</a></p>{{> foot}}
                """
        case .deviceUnlink:
            return """
                {{> head}}<h1>Unlink {{name}}?</h1>{{> error}}
                <p>Its token stops working at once: it uploads nothing more until it is linked again with a new code. Its runs stay in your account.</p>
                <form method="post" action="/devices/{{id}}/unlink">{{> csrf}}<button>Unlink {{name}}</button></form>
                <p><a href="/devices">Keep it linked</a></p>{{> foot}}
                """
        case .importFile:
            return """
                {{> head}}<h1>Import a run</h1>{{> error}}
                <p>Activities recorded with another watch or app: GPX, TCX or FIT files, or a zip of them, up to {{max_mb}} MB in all.</p>
                <form method="post" action="/import" enctype="multipart/form-data">{{> csrf}}
                <label>Files <input type="file" name="file" accept=".gpx,.tcx,.fit,.zip" multiple required></label>
                <button>Import</button></form>
                <p><a href="/account">My account</a></p>{{> foot}}
                """
        case .resume:
            return """
                {{> head}}<h1>Send it again?</h1>
                <p>You are logged in again. What you sent before your session ended was not saved yet: it is kept here.</p>
                <form method="post" action="{{action}}">{{> csrf}}{{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">{{/fields}}
                <button>Send it now</button></form><p><a href="/">Leave it</a></p>{{> foot}}
                """
        case .importResult:
            return """
                {{> head}}<h1>{{title}}</h1>
                <ul class="imports">{{#files}}<li><b>{{name}}</b>: {{text}}{{#runs}}<br><a href="/runs/{{id}}">{{label}}</a>{{/runs}}</li>{{/files}}</ul>
                <p><a href="/runs">My runs</a> · <a href="/import">Import more</a></p>{{> foot}}
                """
        case .message:
            // Every message has a way on: its own link, else home (the runs, or the log-in page).
            return "{{> head}}<h1>{{title}}</h1>{{> error}}<p>{{text}}</p>{{#link}}<p><a href=\"{{href}}\">{{label}}</a></p>{{/link}}"
                + "{{^link}}<p><a href=\"/\">Back to Pacer</a></p>{{/link}}{{> foot}}"
        case .runs:
            return """
                {{> head}}<h1>My runs</h1>{{> error}}
                <p><a href="/calendar" id="calendar-link">Calendar of my runs</a> · <a href="/shoes">My shoes</a> ·
                <a href="/account/export" download>Download all my data</a></p>
                {{#due_shoes}}<p class="due" role="status">Time to replace {{name}}: {{distance}}, past your reminder at {{remind}}.
                <a href="/shoes">My shoes</a></p>{{/due_shoes}}
                <form method="get" action="/runs" class="filter">
                <label>From <input type="date" name="from" value="{{from}}"\(Self.invalid("from"))>\(Self.fieldError("from"))</label>
                <label>To <input type="date" name="to" value="{{to}}"\(Self.invalid("to"))>\(Self.fieldError("to"))</label><button>Show</button></form>
                <ul class="runs">{{#runs}}<li><a href="/runs/{{id}}"><b>{{#run_title}}{{.}} · {{/run_title}}{{date}}</b>{{#run_sport}} <span class="sport">{{.}}</span>{{/run_sport}}
                <span>{{distance}} · {{duration}} · {{pace}}{{#hr}} · {{.}}{{/hr}}</span>{{#run_doubt}}
                <strong class="doubt">⚠ Not believed: {{.}}</strong>{{/run_doubt}}</a></li>{{/runs}}</ul>
                {{^runs}}<p class="empty">No runs{{#filtered}} between these dates{{/filtered}}{{^filtered}} yet: <a href="/devices">link a
                device</a> and go for a run, or <a href="/import">import a file</a> from another watch or app{{/filtered}}.</p>{{/runs}}
                <p class="pages">{{#newer}}<a href="{{.}}">← Newer</a>{{/newer}} {{#older}}<a href="{{.}}">Older →</a>{{/older}}</p>{{> foot}}
                """
        case .run:
            return """
                {{> head}}<h1>{{heading}}</h1>
                <p class="summary">{{sport}} · {{date}} · {{visibility}}</p>
                {{#doubt}}<p class="doubt" id="doubt" role="note"><strong>⚠ Not believed</strong>: {{.}}. It counts in no record.</p>{{/doubt}}
                <p class="summary">{{distance}} · {{duration}} · {{pace}}{{#elevation_gain}} · {{.}}{{/elevation_gain}}{{#hr_avg}} · {{.}}{{/hr_avg}}</p>
                {{#notes}}<p class="notes">{{.}}</p>{{/notes}}
                <p><a href="/runs/{{run_id}}/edit" id="edit-run">Edit, share or delete</a></p>
                {{#workout}}<p>Workout: {{.}}</p>{{/workout}}
                {{#followed}}<p id="followed">Followed: <a href="/plan/sessions/{{session}}">{{name}}</a> ({{date}})</p>{{/followed}}
                {{^has_map}}<p id="no-map">No GPS track: the distance and time are the file's own.</p>{{/has_map}}
                <div id="map" data-tiles="{{tiles}}" data-attribution="{{attribution}}"{{^has_map}} hidden{{/has_map}}></div>
                <h2>Pace</h2><div class="chart"><canvas id="pace-chart" aria-label="Pace against distance"></canvas></div>
                {{#has_elevation}}<h2>Elevation</h2><div class="chart"><canvas id="elevation-chart" aria-label="Elevation against distance"></canvas></div>{{/has_elevation}}
                <h2>Heart rate</h2>{{^has_hr}}<p class="empty">No heart-rate readings in this run: wear a heart-rate strap paired with
                your device on the next one.</p>{{/has_hr}}
                {{#has_hr}}<div class="chart"><canvas id="hr-chart" aria-label="Heart rate against distance"></canvas></div>{{/has_hr}}
                <h2>Splits</h2><table><tr><th>{{unit}}</th><th>Time</th><th>Pace</th><th>HR</th></tr>
                {{#splits}}<tr><td>{{km}}</td><td>{{time}}</td><td>{{pace}}</td><td>{{hr}}</td></tr>{{/splits}}</table>
                {{#split_km}}<p class="note">Splits of {{.}} {{unit}}: the run is longer than 500 {{unit}}.</p>{{/split_km}}
                <h2>Laps</h2>{{#laps}}<p>{{.}}</p>{{/laps}}{{^laps}}<p>No laps recorded.</p>{{/laps}}
                <h2>Heart-rate zones</h2><table><tr><th>Zone</th><th>bpm</th><th>Time</th><th>%</th></tr>
                {{#zones}}<tr><td>{{name}}</td><td>{{range}}</td><td>{{time}}</td><td>{{share}}</td></tr>{{/zones}}</table>
                <p class="note">Zones from a maximum heart rate of {{max_hr}} bpm{{#default_max}} (the default; set yours on
                <a href="/account">your account</a>){{/default_max}}{{#device_max}} (your device's [profile] max_hr_bpm){{/device_max}}.</p>
                <section id="downloads"><h2>Download</h2><p><a href="/runs/{{run_id}}/export.gpx">GPX</a> ·
                <a href="/runs/{{run_id}}/export.tcx">TCX</a> · <a href="/runs/{{run_id}}/export.fit">FIT</a></p></section>
                <script type="application/json" id="run-data">{{{data}}}</script>
                <script src="{{assets.leaflet_js}}"></script><script src="{{assets.chart_js}}"></script>
                <script src="{{assets.run_js}}"></script>{{> foot}}
                """
        case .stats:
            return """
                {{> head}}<h1>Statistics</h1>{{> error}}
                <h2>Goals</h2>{{#goals}}<div class="goal"><p><b>{{label}}</b>: {{done}} of {{target}} ({{percent}} %)</p>
                <progress max="100" value="{{bar}}">{{percent}} %</progress>
                <form method="post" action="/goals/{{id}}" class="row">{{> csrf}}
                <label>{{unit}} <input name="distance_km" value="{{km}}" inputmode="decimal" required></label>
                <label>per <select name="period"><option value="week"{{#week}} selected{{/week}}>week</option>
                <option value="month"{{^week}} selected{{/week}}>month</option></select></label><button>Save</button></form>
                <form method="post" action="/goals/{{id}}/delete">{{> csrf}}<button>Delete this goal</button></form></div>{{/goals}}
                {{^goals}}<p>No goal yet.</p>{{/goals}}
                <form method="post" action="/goals" class="row">{{> csrf}}
                <label>{{unit}} <input name="distance_km" inputmode="decimal" required\(Self.invalid("distance_km"))>\(Self.fieldError("distance_km"))</label>
                <label>per <select name="period"><option value="week">week</option><option value="month">month</option></select></label>
                <button>Add a goal</button></form>
                <h2>Personal records</h2><table><tr><th>Distance</th><th>Time</th><th>Pace</th><th>Run</th></tr>
                {{#records}}<tr><td>{{name}}</td><td>{{time}}</td><td>{{pace}}</td><td><a href="/runs/{{run}}">{{date}}</a></td></tr>{{/records}}</table>
                {{^records}}<p>No records yet: run a kilometre.</p>{{/records}}
                <h2>Volume</h2>{{^has_runs}}<p class="empty" id="no-volume">No runs yet: <a href="/devices">link a device</a> and run, or
                <a href="/import">import a file</a>.</p>{{/has_runs}}
                {{#has_runs}}<h3>Per week</h3><div class="chart"><canvas id="weeks-chart" aria-label="Distance per week, last 26 weeks, in {{unit_name}}"></canvas></div>
                <h3>Per month</h3><div class="chart"><canvas id="months-chart" aria-label="Distance per month, last 12 months, in {{unit_name}}"></canvas></div>
                <script type="application/json" id="volume-data">{{{volume}}}</script>
                <script src="{{assets.chart_js}}"></script><script src="{{assets.stats_js}}"></script>{{/has_runs}}
                {{#periods}}<h2>{{title}}</h2><table><tr><th></th><th>Distance</th><th>Time</th><th>Runs</th></tr>
                {{#rows}}<tr><td>{{label}}</td><td>{{distance}}</td><td>{{time}}</td><td>{{runs}}</td></tr>{{/rows}}</table>{{/periods}}
                {{#has_other_sports}}<h2>Other sports</h2><table id="other-sports"><tr><th>Sport</th><th>Distance</th><th>Time</th><th>Activities</th></tr>
                {{#other_sports}}<tr><td>{{sport}}</td><td>{{distance}}</td><td>{{time}}</td><td>{{count}}</td></tr>{{/other_sports}}</table>{{/has_other_sports}}
                <p class="note">Weeks start on Monday, in your time zone ({{timezone}}).</p>{{> uncounted}}{{> foot}}
                """
        case .heart:
            return """
                {{> head}}<h1>Heart rate</h1>
                <dl class="vitals"><dt>Newest reading</dt><dd id="newest">{{newest}}{{^newest}}none yet{{/newest}}</dd>
                <dt>Resting</dt><dd id="resting">{{resting}}{{^resting}}not known yet: wear the strap between runs{{/resting}}</dd></dl>
                <h2>Per run</h2>{{^has_runs}}<p class="empty" id="no-runs">No run with heart rate in these weeks yet: <a href="/devices">link a
                device</a> and run with its heart-rate strap, or <a href="/import">import a file</a> with heart rate.</p>{{/has_runs}}
                {{#has_runs}}<div class="chart"><canvas id="runs-chart" aria-label="Average and maximum heart rate per run"></canvas></div>{{/has_runs}}
                <h2>Time in zones per week</h2><div class="wide"><table><tr><th>Week</th>{{#zone_names}}<th>{{name}}</th>{{/zone_names}}</tr>
                {{#weeks}}<tr><td>{{label}}</td>{{#zones}}<td>{{.}}</td>{{/zones}}</tr>{{/weeks}}</table></div>
                {{^weeks}}<p>No heart-rate time in runs of these weeks.</p>{{/weeks}}
                <p class="note">{{#zone_names}}{{name}} {{range}} · {{/zone_names}}from a maximum of {{max_hr}} bpm{{#default_max}} (the
                default; set yours on <a href="/account">your account</a>){{/default_max}}{{#device_max}} (your device's [profile]
                max_hr_bpm){{/device_max}}.</p>
                <h2>Between runs</h2><table><tr><th>Day</th><th>Resting</th><th>Lowest</th><th>Readings</th></tr>
                {{#days}}<tr><td>{{date}}</td><td>{{resting}}</td><td>{{min}}</td><td>{{count}}</td></tr>{{/days}}</table>
                {{^days}}<p>No readings between runs yet.</p>{{/days}}
                <p class="note">The last {{shown_weeks}} weeks; weeks start on Monday and days in your time zone ({{timezone}}). Resting is
                the day's 5th percentile of the strap's readings outside runs, from two minutes of readings.</p>{{> uncounted}}
                <script type="application/json" id="heart-data">{{{data}}}</script>
                <script src="{{assets.chart_js}}"></script><script src="{{assets.heart_js}}"></script>{{> foot}}
                """
        case .runEdit: return RunManagementTemplates.edit
        case .runDelete: return RunManagementTemplates.delete
        case .runShareLink: return RunManagementTemplates.shareLink
        case .runShared: return RunManagementTemplates.shared
        case .calendar: return CalendarTemplates.page
        case .shoes: return ShoesTemplates.page
        case .plan: return PlanTemplates.plan
        case .planSession: return PlanTemplates.session
        case .races: return RaceTemplates.list
        case .raceNew: return RaceTemplates.new
        case .race: return RaceTemplates.page
        case .raceManage: return RaceTemplates.manage
        }
    }

    /// An input's attributes when the refusal is about it: `aria-invalid` and the message's id.
    static func invalid(_ field: String) -> String {
        "{{#invalid_\(field)}} aria-invalid=\"true\" aria-describedby=\"\(field)-error\"{{/invalid_\(field)}}"
    }

    /// The refusal's words beside the field it is about.
    static func fieldError(_ field: String) -> String {
        "{{#error_\(field)}}<span class=\"field-error\" id=\"\(field)-error\">{{.}}</span>{{/error_\(field)}}"
    }

    var title: String {
        switch self {
        case .signup: "Create an account"
        case .confirm: "Confirm your address"
        case .login: "Log in"
        case .reset, .resetPassword: "Reset the password"
        case .account: "My account"
        case .accountDelete: "Delete my account"
        case .devices: "My devices"
        case .deviceUnlink: "Unlink a device"
        case .importFile: "Import a run"
        case .importResult: "Imported"
        case .message: "Pacer"
        case .resume: "Send it again"
        case .runs: "My runs"
        case .run, .runShared: "Run"
        case .runEdit: "Edit a run"
        case .runDelete: "Delete a run"
        case .runShareLink: "Share link"
        case .calendar: "Calendar"
        case .shoes: "My shoes"
        case .stats: "Statistics"
        case .plan: "Training plan"
        case .planSession: "Planned session"
        case .heart: "Heart rate"
        case .races: "Races"
        case .raceNew: "Organise a race"
        case .race: "Race"
        case .raceManage: "Manage a race"
        }
    }

    /// Light or dark as the system is set (`color-scheme` gives the browser's own dark page and
    /// controls; the few colours of the pages' own are variables of both schemes).
    static let style = ":root{color-scheme:light dark;--line:#ccc;--muted:#444;--link:#0645ad;--accent:#1f5fbf;--error:#b00;--map:#e8eef0;"
        + "--out:#f6f6f6;--today:#eef4ff;--done:#1a8f3c}"
        + "@media (prefers-color-scheme:dark){:root{--line:#4a4f57;--muted:#c4c8ce;--link:#8ab4f8;--accent:#6fa0ff;--error:#ff8a80;"
        + "--map:#1e2630;--out:#23272e;--today:#1d2b45;--done:#3fbf6a}}"
        + "a{color:var(--link)}"
        + "body{font-family:sans-serif;max-width:32em;margin:1em auto;padding:0 1em;line-height:1.4}"
        + "label{display:block;margin:.8em 0}input{display:block;width:100%;box-sizing:border-box;font-size:1.1em;padding:.4em}"
        + "button{font-size:1.1em;padding:.5em 1em;margin:.5em 0}.error{color:var(--error);font-weight:bold}"
        + ".field-error{display:block;color:var(--error);font-weight:bold;font-size:.95em;margin-top:.2em}[aria-invalid=true]{border:2px solid var(--error)}"
        + ".code{font:bold 2.2em monospace;letter-spacing:.1em}"
        + ".device{border-top:1px solid var(--line)}dt{font-weight:bold}"
        + PageLayout.style
        + "ul.runs{list-style:none;padding:0}ul.runs a{display:block;padding:.6em 0;border-bottom:1px solid var(--line);text-decoration:none;color:inherit}"
        + "ul.runs span{display:block;color:var(--muted)}.pages{display:flex;justify-content:space-between}"
        + "form.filter,form.row{display:flex;flex-wrap:wrap;gap:.5em;align-items:flex-end}form.filter label,form.row label{flex:1 1 8em;margin:.3em 0}"
        + "select{font-size:1.1em;padding:.4em;display:block;width:100%}"
        + "#map{height:60vh;max-height:420px;background:var(--map)}.chart{position:relative;height:200px}"
        + "table{border-collapse:collapse;width:100%}td,th{text-align:right;padding:.25em .4em;border-bottom:1px solid var(--line)}"
        + "td:first-child,th:first-child{text-align:left}progress{width:100%}.goal{margin-bottom:1em}.note{color:var(--muted);font-size:.9em}"
        + PlanTemplates.style + RunManagementTemplates.style + CalendarTemplates.style + ShoesTemplates.style + RaceTemplates.style
        + ".empty{padding:.8em;border:1px dashed var(--line);border-radius:.3em}"
        + ".wide{overflow-x:auto}dl.vitals{display:grid;grid-template-columns:auto 1fr;gap:.2em 1em}dl.vitals dd{margin:0}"

    static let partials = [
        "head": """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="robots" content="noindex"><meta name="referrer" content="{{referrer}}{{^referrer}}no-referrer{{/referrer}}"><title>{{page_title}} · Pacer</title>
            <link rel="icon" href="{{assets.icon}}" type="image/svg+xml">
            {{#stylesheet}}<link rel="stylesheet" href="{{.}}">{{/stylesheet}}<style>\(style)</style></head><body>{{> nav}}

            """,
        "foot": "\n</body></html>\n",
        "error": #"{{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}"#,
        "csrf": #"<input type="hidden" name="csrf" value="{{csrf}}">"#,
        "timezones": #"{{#timezones}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/timezones}}"#,
        "occurrence": PlanTemplates.occurrence,
        "uncounted": #"{{#uncounted}}<p class="note">Some older runs are still being counted: reload for the rest.</p>{{/uncounted}}"#,
        "nav": PageLayout.nav,
    ]

    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        // The templates are constants of this file: a parse error is a bug caught by any test.
        for (name, text) in partials { try! library.register(text, named: name) }
        for page in WebPage.allCases { try! library.register(page.template, named: page.rawValue) }
        return library
    }()

    /// The pages whose form has the time-zone list.
    static let hasTimeZoneSelect: Set<WebPage> = [.signup, .account]

    static let headers = SecurityHeaders.html(style: style, formAction: "'self'")

    /// The page as a response. `values` fill its fields (never a password: forms are re-shown
    /// without them).
    func response(_ status: HTTPResponse.Status = .ok, values: [String: Any] = [:], csrf: String?, error: String? = nil,
                  extraHeaders: HTTPFields = [:], headers pageHeaders: HTTPFields = Self.headers) -> Response {
        var context = PageLayout.values()
        context.merge(values) { _, given in given }
        context["page_title"] = values["title"] ?? title
        context["csrf"] = csrf ?? ""
        if let error { FieldErrors.place(error, in: &context) }
        if context["timezones"] == nil, Self.hasTimeZoneSelect.contains(self) {
            context["timezones"] = TimeZoneNames.options(selected: TimeZoneNames.canonical(values["timezone"] as? String ?? "") ?? "UTC")
        }
        let html = Self.library.render(context, withTemplate: rawValue) ?? ""
        var headers = pageHeaders
        headers.append(contentsOf: extraHeaders)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

/// Headers of every HTML answer (issue 19): a CSP with no script, its one style by hash and no
/// framing; nosniff; no referrer; no caching (pages show personal data and tokens). Images from
/// this server only (the favicon), and from `images` too (the map's tile server). A page with
/// scripts (the run page) allows only this server's files (`/assets`, never inline script), with
/// their stylesheets.
enum SecurityHeaders {
    static func html(style: String, formAction: String, scripts: Bool = false, images: [String] = [], connect: String? = nil) -> HTTPFields {
        let styleHash = Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString()
        let script = scripts ? "script-src 'self'; style-src 'self' " : "style-src "
        let policy = "default-src 'none'; \(script)'sha256-\(styleHash)'; img-src \((["'self'"] + images.filter { $0 != "'self'" }).joined(separator: " ")); "
            + (connect.map { "connect-src \($0); " } ?? "")
            + "base-uri 'none'; form-action \(formAction); frame-ancestors 'none'"
        var fields: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        fields[.contentSecurityPolicy] = policy
        fields[.init("X-Frame-Options")!] = "DENY"
        fields[.init("X-Content-Type-Options")!] = "nosniff"
        fields[.init("Referrer-Policy")!] = "no-referrer"
        return fields
    }
}

/// A refusal of a web route, answered as a page: the form again with the message (naming the
/// field), a plain message page, or the way to the log-in page (401).
enum WebRefusal: Error, HTTPResponseError, Sendable {
    case form(HTTPResponse.Status, page: WebPage, message: String, values: [String: String] = [:], csrf: String? = nil)
    case plain(HTTPResponse.Status, String)
    case signInFirst
    case tooManyAttempts(retryAfter: Int, message: String)

    var status: HTTPResponse.Status {
        switch self {
        case .form(let status, _, _, _, _), .plain(let status, _): status
        case .signInFirst: .unauthorized
        case .tooManyAttempts: .tooManyRequests
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let csrf = (context as? CloudRequestContext)?.session?.csrf ?? (context as? SignedInContext)?.session.csrf ?? request.cookies[Sessions.formCookieName]?.value
        switch self {
        case .form(let status, let page, let message, let values, let formCSRF):
            return page.response(status, values: values, csrf: formCSRF ?? csrf, error: message)
        case .plain(let status, let message):
            return WebPage.message.response(status, values: ["title": "Not done"], csrf: nil, error: message)
        case .signInFirst:
            return WebPage.message.response(.unauthorized, values: ["title": "Log in first", "text": "Your session has ended or you are not logged in.",
                                                                    "link": ["href": "/login", "label": "Log in"]], csrf: nil)
        case .tooManyAttempts(let seconds, let message):
            return WebPage.message.response(.tooManyRequests, values: ["title": "Too many attempts"], csrf: nil, error: message,
                                            extraHeaders: [.retryAfter: String(seconds)])
        }
    }
}
