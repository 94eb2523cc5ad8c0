/// The training plan's templates, style and script (`WebPage.plan`, `WebPage.planSession`,
/// /assets/pacer/plan.js). The form works without the script: it only adds and removes rows.
enum PlanTemplates {
    static let plan = """
        {{> head}}<h1>Training plan</h1>{{> error}}
        <p><a href="/plan/new" id="new-session">+ New session</a></p>
        <nav class="month">{{#prev}}<a href="/plan?month={{.}}" rel="prev">← Earlier</a>{{/prev}}<b id="month-label">{{month_label}}</b>
        {{#next}}<a href="/plan?month={{.}}" rel="next">Later →</a>{{/next}}</nav>
        <table class="month" id="month"><tr><th>Mon</th><th>Tue</th><th>Wed</th><th>Thu</th><th>Fri</th><th>Sat</th><th>Sun</th></tr>
        {{#weeks}}<tr>{{#days}}<td class="{{class}}"{{#today}} id="today" aria-current="date"{{/today}}>
        <a class="day" href="/plan/new?date={{iso}}" title="Plan a session on {{iso}}">{{day}}</a>
        {{#sessions}}<a class="s{{#done}} done{{/done}}" href="/plan/sessions/{{id}}">{{#done}}✓ {{/done}}{{name}}</a>{{/sessions}}</td>{{/days}}</tr>{{/weeks}}
        </table>
        <h2>Upcoming</h2><ul class="upcoming" id="upcoming">{{#upcoming}}{{> occurrence}}{{/upcoming}}</ul>
        {{^upcoming}}<p>Nothing planned for the next four weeks.</p>{{/upcoming}}
        <p class="note">Dates are in your time zone ({{timezone}}). The sessions of the next {{days_ahead}} days that are not done
        yet go to your devices.</p>{{> foot}}
        """

    static let occurrence = """
        <li{{#done}} class="done"{{/done}}><b>{{date}}</b>{{#today}} <em>today</em>{{/today}}
        <a href="/plan/sessions/{{session}}">{{name}}</a><span>{{steps}}</span>
        <form method="post" action="/plan/sessions/{{session}}/{{#done}}undone{{/done}}{{^done}}done{{/done}}" class="mark">{{> csrf}}
        <input type="hidden" name="date" value="{{iso}}"><input type="hidden" name="back" value="{{back}}">
        {{#done}}<span class="check">✓ Done{{#run}} by <a href="/runs/{{.}}">a run</a>{{/run}}</span> <button>Not done</button>{{/done}}
        {{^done}}<button>Mark done</button>{{/done}}</form></li>
        """

    static let session = """
        {{> head}}<h1>{{heading}}</h1>{{> error}}
        <form method="post" action="{{action}}" id="session-form">{{> csrf}}
        <label>Name (said on the device) <input name="name" value="{{name}}" maxlength="80" required\(WebPage.invalid("name"))>\(WebPage.fieldError("name"))</label>
        <label>Date <input type="date" name="date" value="{{date}}" required\(WebPage.invalid("date"))>\(WebPage.fieldError("date"))</label>
        <fieldset><legend>Repeat weekly on</legend><div class="weekdays">
        {{#weekdays}}<label><input type="checkbox" name="{{field}}" value="1"{{#on}} checked{{/on}}>{{label}}</label>{{/weekdays}}</div>
        <label>for how many weeks from the date (1 to 52) <input name="weeks" value="{{weeks}}" inputmode="numeric" maxlength="2"\(WebPage.invalid("weeks"))>\(WebPage.fieldError("weeks"))</label>
        </fieldset>
        <h2>Steps</h2>
        <p class="note">A repeat runs the steps after it again: 6 rounds of the next 2 steps. Distances like 400 m, 2 km or 3 mi, times
        like 10 (minutes) or 1:30, paces per {{pace_unit}} like {{pace_example}}, heart rate as a zone 1 to 5 or like 140-150 bpm. A step whose kind is
        — is left out.</p>
        <ol class="steps" id="steps">{{#rows}}<li class="step{{#inner}} inner{{/inner}}">
        <label>Kind <select name="step{{n}}_type"\(rowInvalid("type"))>{{#types}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/types}}</select>\(rowError("type"))</label>
        <label class="plain">Ends by <select name="step{{n}}_end"\(rowInvalid("end"))>{{#ends}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/ends}}</select>\(rowError("end"))</label>
        <label class="plain">Amount <input name="step{{n}}_amount" value="{{amount}}" placeholder="400 m"\(rowInvalid("amount"))>\(rowError("amount"))</label>
        <label class="plain">Target <select name="step{{n}}_target"\(rowInvalid("target"))>{{#targets}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/targets}}</select>\(rowError("target"))</label>
        <label class="plain">Range <input name="step{{n}}_value" value="{{value}}" placeholder="{{pace_example}}"\(rowInvalid("value"))>\(rowError("value"))</label>
        <label class="rep">Rounds <input name="step{{n}}_times" value="{{times}}" inputmode="numeric" maxlength="3"\(rowInvalid("times"))>\(rowError("times"))</label>
        <label class="rep">of the next … steps <input name="step{{n}}_block" value="{{block}}" inputmode="numeric" maxlength="2"\(rowInvalid("block"))>\(rowError("block"))</label>
        </li>{{/rows}}</ol>
        <p><button type="button" id="add-step" hidden>Add a step</button></p>
        <button id="save">Save the session</button></form>
        {{#existing}}<h2>Dates</h2><ul class="upcoming" id="dates">{{#occurrences}}{{> occurrence}}{{/occurrences}}</ul>
        {{^occurrences}}<p>No date of it from four weeks ago to eight weeks ahead.</p>{{/occurrences}}
        <form method="post" action="/plan/sessions/{{id}}/delete">{{> csrf}}<button id="delete">Delete this session</button></form>{{/existing}}
        <p><a href="/plan">Back to the plan</a></p>
        <script src="{{assets.plan_js}}"></script>{{> foot}}
        """

    /// A step row's control when the refusal is about it (`FieldErrors.place` marks the row).
    static func rowInvalid(_ suffix: String) -> String {
        "{{#invalid_\(suffix)}} aria-invalid=\"true\" aria-describedby=\"step{{n}}_\(suffix)-error\"{{/invalid_\(suffix)}}"
    }

    static func rowError(_ suffix: String) -> String {
        "{{#error_\(suffix)}}<span class=\"field-error\" id=\"step{{n}}_\(suffix)-error\">{{.}}</span>{{/error_\(suffix)}}"
    }

    static let style = "nav.month{display:flex;justify-content:space-between;align-items:center;margin:.5em 0}"
        + "table.month{table-layout:fixed}table.month th{text-align:center;font-size:.8em;padding:.2em 0}"
        + "table.month td{vertical-align:top;height:4.5em;padding:2px;border:1px solid var(--line);text-align:left;font-size:.8em;overflow:hidden}"
        + "table.month td.out{background:var(--out);color:var(--muted)}table.month td.today{background:var(--today);outline:2px solid var(--accent)}"
        + "table.month a.day{display:block;font-weight:bold;color:inherit;text-decoration:none}"
        // A name gets two lines of a narrow phone's cell, broken anywhere, then an ellipsis.
        + "table.month a.s{display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden;overflow-wrap:anywhere;"
        + "font-size:.9em;line-height:1.2;background:#1f5fbf;color:#fff;border-radius:3px;padding:1px 2px;margin-top:2px;text-decoration:none}"
        + "table.month a.s.done{background:#1a8f3c}"
        + "ul.upcoming{list-style:none;padding:0}ul.upcoming li{border-bottom:1px solid var(--line);padding:.5em 0}"
        + "ul.upcoming span{display:block;color:var(--muted)}form.mark{display:flex;align-items:center;gap:1em;flex-wrap:wrap}"
        + "form.mark button{margin:.2em 0;font-size:1em;padding:.3em .8em}.check{color:var(--done);font-weight:bold}"
        + "fieldset{border:1px solid var(--line);margin:.8em 0}.weekdays{display:flex;flex-wrap:wrap;gap:.2em .8em}"
        + ".weekdays label{display:flex;align-items:center;gap:.2em;margin:.2em 0}.weekdays input{width:auto;display:inline}"
        + "ol.steps{padding-left:1.5em}li.step{border:1px solid var(--line);padding:.3em .5em;margin:.5em 0;display:flex;flex-wrap:wrap;gap:0 .5em}"
        + "li.step label{flex:1 1 8em;margin:.2em 0}li.step:has(option[value=repeat]:checked) .plain{display:none}"
        + "li.step:not(:has(option[value=repeat]:checked)) .rep{display:none}li.step button{font-size:.9em;padding:.2em .6em}"
        + "li.step.inner{margin-left:1.2em;border-left:3px solid #1f5fbf}ul.upcoming span.check{display:inline;color:var(--done)}"

    /// Adds an "Add a step" button and a "Remove" button per row, numbering the rows again so
    /// each field's name says its row.
    static let script = #"""
        (function () {
          'use strict';
          var list = document.getElementById('steps');
          var add = document.getElementById('add-step');
          if (!list || !add) { return; }
          function renumber() {
            Array.prototype.forEach.call(list.children, function (row, index) {
              row.querySelectorAll('[name]').forEach(function (field) {
                field.name = field.name.replace(/^step\d+_/, 'step' + (index + 1) + '_');
              });
            });
          }
          function removable(row) {
            var old = row.querySelector('button.remove');
            if (old) { old.remove(); }
            var button = document.createElement('button');
            button.type = 'button';
            button.className = 'remove';
            button.textContent = 'Remove';
            button.addEventListener('click', function () {
              if (list.children.length > 1) { row.remove(); renumber(); }
            });
            row.appendChild(button);
          }
          Array.prototype.forEach.call(list.children, removable);
          // The blank rows are for browsers without this script: one is enough here.
          Array.prototype.filter.call(list.children, function (row) { return row.querySelector('select').value === ''; })
            .slice(1).forEach(function (row) { row.remove(); });
          renumber();
          add.hidden = false;
          add.addEventListener('click', function () {
            if (list.children.length >= 100) { return; }
            var row = list.lastElementChild.cloneNode(true);
            row.querySelectorAll('input').forEach(function (field) { field.value = ''; });
            row.querySelectorAll('select').forEach(function (field) { field.selectedIndex = 0; });
            row.classList.remove('inner');
            removable(row);
            list.appendChild(row);
            renumber();
          });
        })();
        """#
}
