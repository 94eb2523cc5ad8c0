/// A refusal's message on its form: the message names the field it is about as the handlers
/// write it ("timezone: 'GMT+1' is not …", "step3_value: …", "email or password: …"). On the
/// page the field's name becomes the words of its label ("Time zone", "Step 3, range"), the
/// message is shown beside the field as well as at the top, and the field is marked
/// `aria-invalid` (the templates' `WebPage.invalid` and `WebPage.fieldError`).
enum FieldErrors {
    /// The words of each form field's label.
    static let labels = [
        "email": "E-mail", "password": "Password", "display_name": "Your name", "timezone": "Time zone",
        "max_hr": "Maximum heart rate", "units": "Distances in", "name": "Name", "date": "Date", "weeks": "Weeks", "distance_km": "Distance",
        "period": "Period", "from": "From", "to": "To", "page": "Page", "token": "Link", "file": "File", "steps": "Steps",
        "device": "Device", "text": "Message", "kind": "Answer", "month": "Month",
        "title": "Name", "notes": "Notes", "sport": "Sport", "visibility": "Who sees it", "shoe": "Shoes",
        "start_km": "Distance already run", "remind_km": "Remind me at", "new_name": "Name", "new_start_km": "Distance already run",
        "new_remind_km": "Remind me at",
        "q": "Name", "near": "Near", "within_km": "Within", "starts": "Start", "closes": "Registration closes",
        "waypoints": "Start, stages and arrival", "plan": "The course", "path": "The course", "access": "Who may enrol",
        "corrected": "Corrected gun time", "status": "Status", "code": "Registration link",
    ]

    /// The words of a step row's fields ("step3_value" is "Step 3, range").
    static let stepLabels = [
        "type": "kind", "end": "ends by", "amount": "amount", "target": "target", "value": "range", "times": "rounds",
        "block": "steps repeated",
    ]

    /// The label of a field name, nil when it is no field of a form.
    static func label(_ field: String) -> String? {
        if let label = labels[field] { return label }
        guard let match = field.wholeMatch(of: /step([0-9]{1,3})(?:_([a-z]+))?/) else { return nil }
        guard let suffix = match.2 else { return "Step \(match.1)" }
        return stepLabels[String(suffix)].map { "Step \(match.1), \($0)" }
    }

    /// The fields a message is about and what it says of them; nil when it names no field.
    static func parse(_ message: String) -> (fields: [String], text: String)? {
        guard let colon = message.range(of: ": ") else { return nil }
        let fields = message[..<colon.lowerBound].components(separatedBy: " or ")
        guard fields.allSatisfy({ label($0) != nil }) else { return nil }
        return (fields, String(message[colon.upperBound...]))
    }

    /// Puts the message into a page's values: `error` at the top in the runner's words, and for
    /// each field `invalid_FIELD` and `error_FIELD` (the text beside the first one); a step
    /// row's fields go into the row (`invalid_value`, `error_value` of the row whose `n` it is).
    static func place(_ message: String, in context: inout [String: Any]) {
        guard let (fields, text) = parse(message) else {
            context["error"] = message
            return
        }
        context["error"] = fields.compactMap(label).joined(separator: " or ") + ": " + text
        for (index, field) in fields.enumerated() {
            let beside = index == 0 ? text : nil
            if let match = field.wholeMatch(of: /step([0-9]{1,3})_([a-z]+)/), var rows = context["rows"] as? [[String: Any]],
               let row = rows.firstIndex(where: { ($0["n"] as? Int).map(String.init) ?? ($0["n"] as? String) == String(match.1) }) {
                rows[row]["invalid_\(match.2)"] = true
                if let beside { rows[row]["error_\(match.2)"] = beside }
                context["rows"] = rows
            } else {
                context["invalid_\(field)"] = true
                if let beside { context["error_\(field)"] = beside }
            }
        }
    }
}

extension Dictionary where Key == String, Value == Any {
    /// A page's text values: what a form refused (`WebRefusal.form`) is shown again with.
    var strings: [String: String] {
        var out: [String: String] = [:]
        for (key, value) in self { if let text = value as? String { out[key] = text } }
        return out
    }
}
