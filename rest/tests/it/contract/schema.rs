//! A strict reader of the server's own OpenAPI 3.1 document: finds the schema of an
//! operation's answer and checks a JSON value against it, refusing what a lenient validator
//! lets through: a field the schema does not declare, an empty string, a null (the API's
//! rule is to leave out what has no value).

use serde_json::Value;

/// The document and the problems found so far.
pub struct Contract {
    doc: Value,
    /// One line per problem: where, and what.
    pub problems: Vec<String>,
}

impl Contract {
    /// Reads the document served at `/openapi.json`.
    pub fn new(doc: Value) -> Self {
        Self {
            doc,
            problems: Vec::new(),
        }
    }

    /// Checks one answer of `method path_template` (as the document spells them).
    pub fn check(&mut self, method: &str, template: &str, status: u16, body: &Value) {
        let at = format!("{} {template} {status}", method.to_uppercase());
        let operation = &self.doc["paths"][template][method.to_lowercase()];
        if operation.is_null() {
            self.problems.push(format!("{at}: operation not described"));
            return;
        }
        let schema =
            &operation["responses"][status.to_string()]["content"]["application/json"]["schema"];
        if schema.is_null() {
            self.problems
                .push(format!("{at}: status or its JSON body not described"));
            return;
        }
        let mut found = Vec::new();
        walk(&self.doc, schema, body, &at, &mut found);
        self.problems.extend(found);
    }
}

fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let pointer = reference.trim_start_matches('#');
            resolve(doc, doc.pointer(pointer).unwrap_or(&Value::Null))
        }
        None => schema,
    }
}

fn types_of(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn type_matches(kind: &str, value: &Value) -> bool {
    match kind {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// Checks `value` against `schema`, adding a line to `found` for each problem.
fn walk(doc: &Value, schema: &Value, value: &Value, at: &str, found: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    if value.is_null() {
        found.push(format!("{at}: null (leave the field out instead)"));
        return;
    }
    if value.as_str() == Some("") {
        found.push(format!("{at}: empty string"));
        return;
    }
    if schema["allOf"].is_array() {
        let merged = merge_all_of(doc, schema);
        return walk(doc, &merged, value, at, found);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(choices) = schema[key].as_array() {
            let fits = choices.iter().any(|choice| {
                let mut trial = Vec::new();
                walk(doc, choice, value, at, &mut trial);
                trial.is_empty()
            });
            if !fits {
                found.push(format!("{at}: fits none of the {key} choices: {value}"));
            }
        }
    }
    let types = types_of(schema);
    if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
        found.push(format!("{at}: {value} is not of type {types:?}"));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        found.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let Some(n) = value.as_f64() {
        let below = schema["minimum"].as_f64().is_some_and(|min| n < min);
        let above = schema["maximum"].as_f64().is_some_and(|max| n > max);
        if below || above {
            found.push(format!("{at}: {value} is outside the schema's range"));
        }
    }
    match value {
        Value::Object(fields) => walk_object(doc, schema, fields, at, found),
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(doc, item, v, &format!("{at}[{i}]"), found);
                }
            }
        }
        _ => {}
    }
}

/// One schema for an `allOf` (how a flattened struct is described): the properties and
/// required fields of every part.
fn merge_all_of(doc: &Value, schema: &Value) -> Value {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    let parts = schema["allOf"].as_array().into_iter().flatten();
    for part in parts.map(|p| resolve(doc, p)) {
        let part = if part["allOf"].is_array() {
            merge_all_of(doc, part)
        } else {
            part.clone()
        };
        if let Some(p) = part["properties"].as_object() {
            properties.extend(p.clone());
        }
        required.extend(part["required"].as_array().cloned().unwrap_or_default());
    }
    serde_json::json!({"type": "object", "properties": properties, "required": required})
}

fn walk_object(
    doc: &Value,
    schema: &Value,
    fields: &serde_json::Map<String, Value>,
    at: &str,
    found: &mut Vec<String>,
) {
    let declared = schema["properties"].as_object();
    let extra = &schema["additionalProperties"];
    for (name, v) in fields {
        let here = format!("{at}.{name}");
        match declared.and_then(|d| d.get(name)) {
            Some(field) => walk(doc, field, v, &here, found),
            None if extra.is_object() => walk(doc, extra, v, &here, found),
            // A oneOf / allOf schema declares its fields in its branches.
            None if declared.is_none() && schema["type"].is_null() => {}
            None => found.push(format!("{here}: not declared by the schema")),
        }
    }
    for name in schema["required"].as_array().into_iter().flatten() {
        if let Some(name) = name.as_str()
            && !fields.contains_key(name)
        {
            found.push(format!("{at}: required field {name} missing"));
        }
    }
}
