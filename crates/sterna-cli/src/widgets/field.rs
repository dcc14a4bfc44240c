//! One form field, asked with the widget its schema calls for: select for enums,
//! multi-select for arrays, confirm for booleans, validated text for strings and numbers.

use super::{KEYS, Stop};
use crate::check::{check, options, parse_text};
use inquire::ui::{Color, RenderConfig, Styled};
use inquire::validator::Validation;
use inquire::{Confirm, MultiSelect, Select, Text};
use serde_json::Value;
use sterna::types::elicitation::{NumberKind, PrimitiveSchema};

/// The label and help line of a field.
fn label_and_help(name: &str, field: &PrimitiveSchema, required: bool) -> (String, String) {
    let (title, description) = match field {
        PrimitiveSchema::String(s) => (&s.title, &s.description),
        PrimitiveSchema::Number(s) => (&s.title, &s.description),
        PrimitiveSchema::Boolean(s) => (&s.title, &s.description),
        PrimitiveSchema::SingleSelect(s) => (&s.title, &s.description),
        PrimitiveSchema::MultiSelect(s) => (&s.title, &s.description),
    };
    let mut label = title.clone().unwrap_or_else(|| name.to_owned());
    if !required {
        label.push_str(" (optional)");
    }
    let mut help = Vec::new();
    if let Some(d) = description {
        help.push(d.trim_end_matches('.').to_owned());
    }
    if let Some(h) = constraint(field) {
        help.push(h);
    }
    if !required {
        help.push("empty to leave out".into());
    }
    help.push(KEYS.into());
    (label, help.join(" · "))
}

fn constraint(field: &PrimitiveSchema) -> Option<String> {
    match field {
        PrimitiveSchema::Number(n) => {
            let kind = if n.kind == NumberKind::Integer {
                "whole number"
            } else {
                "number"
            };
            Some(match (n.minimum, n.maximum) {
                (Some(a), Some(b)) => format!("{kind} from {a} to {b}"),
                (Some(a), None) => format!("{kind}, at least {a}"),
                (None, Some(b)) => format!("{kind}, at most {b}"),
                (None, None) => kind.to_owned(),
            })
        }
        PrimitiveSchema::String(s) => s.format.map(|f| format!("{f:?}").to_lowercase()),
        PrimitiveSchema::MultiSelect(_) => Some("Space toggles, Enter confirms".into()),
        _ => None,
    }
}

/// The text shown for an option: its title, and its value when they differ.
pub(crate) fn option_label(value: &str, title: &str) -> String {
    let title = title.trim_end_matches('.');
    if title == value {
        value.to_owned()
    } else {
        format!("{title} [{value}]")
    }
}

/// How a widget left with Esc reads: `esc` (`<declined>` in a form) instead of inquire's
/// `<canceled>`.
fn render(esc: &'static str) -> RenderConfig<'static> {
    RenderConfig::default().with_canceled_prompt_indicator(Styled::new(esc).with_fg(Color::DarkRed))
}

/// Asks one field. `current` pre-fills it (the schema default, or an earlier answer);
/// `esc` is what the field reads when Esc leaves it (`<declined>` in a form).
/// `Ok(None)`: an optional field left empty.
pub(crate) fn ask(
    name: &str,
    field: &PrimitiveSchema,
    required: bool,
    current: Option<&Value>,
    esc: &'static str,
) -> Result<Option<Value>, Stop> {
    let (label, help) = label_and_help(name, field, required);
    let style = render(esc);
    match field {
        PrimitiveSchema::SingleSelect(s) => {
            let opts = options(&s.options);
            let mut labels: Vec<String> = opts.iter().map(|(v, t)| option_label(v, t)).collect();
            if !required {
                labels.push("(leave out)".into());
            }
            let pick = current.and_then(Value::as_str).or(s.default.as_deref());
            let cursor = pick
                .and_then(|p| opts.iter().position(|(v, _)| v == p))
                .unwrap_or(0);
            let chosen = Select::new(&label, labels.clone())
                .with_render_config(style)
                .with_help_message(&help)
                .with_starting_cursor(cursor)
                .raw_prompt()?;
            Ok(opts
                .get(chosen.index)
                .map(|(v, _)| Value::String(v.clone())))
        }
        PrimitiveSchema::MultiSelect(m) => {
            let opts = options(&m.options);
            let labels: Vec<String> = opts.iter().map(|(v, t)| option_label(v, t)).collect();
            let picked: Vec<String> = match current {
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect(),
                _ => m.default.clone().unwrap_or_default(),
            };
            let defaults: Vec<usize> = (0..opts.len())
                .filter(|i| picked.contains(&opts[*i].0))
                .collect();
            let (min, max) = (
                m.min_items.unwrap_or(0) as usize,
                m.max_items.map(|x| x as usize),
            );
            let chosen = MultiSelect::new(&label, labels)
                .with_render_config(style)
                .with_help_message(&help)
                .with_default(&defaults)
                .with_validator(move |sel: &[inquire::list_option::ListOption<&String>]| {
                    Ok(match (sel.len() < min, max.filter(|m| sel.len() > *m)) {
                        (true, _) => Validation::Invalid(format!("choose at least {min}").into()),
                        (_, Some(m)) => Validation::Invalid(format!("choose at most {m}").into()),
                        _ => Validation::Valid,
                    })
                })
                .raw_prompt()?;
            let values: Vec<Value> = chosen
                .iter()
                .map(|o| Value::String(opts[o.index].0.clone()))
                .collect();
            Ok((required || !values.is_empty()).then_some(Value::Array(values)))
        }
        PrimitiveSchema::Boolean(b) => {
            let mut c = Confirm::new(&label)
                .with_render_config(style)
                .with_help_message(&help);
            match current.and_then(Value::as_bool).or(b.default) {
                // Shown as (Y/n) or (y/N).
                Some(d) => c = c.with_default(d),
                None => c = c.with_placeholder("(y/n)"),
            }
            Ok(Some(Value::Bool(c.prompt()?)))
        }
        PrimitiveSchema::String(_) | PrimitiveSchema::Number(_) => {
            text(&label, &help, field, required, current, style)
        }
    }
}

fn text(
    label: &str,
    help: &str,
    field: &PrimitiveSchema,
    required: bool,
    current: Option<&Value>,
    style: RenderConfig<'static>,
) -> Result<Option<Value>, Stop> {
    let initial = match (current, field) {
        (Some(Value::String(s)), _) => s.clone(),
        (Some(v), _) => v.to_string(),
        (None, PrimitiveSchema::String(s)) => s.default.clone().unwrap_or_default(),
        (None, PrimitiveSchema::Number(n)) => n.default.map(|d| d.to_string()).unwrap_or_default(),
        _ => String::new(),
    };
    let f = field.clone();
    let answer = Text::new(label)
        .with_render_config(style)
        .with_help_message(help)
        .with_initial_value(&initial)
        .with_validator(move |s: &str| {
            Ok(match s.is_empty() {
                true if required => Validation::Invalid("an answer is required".into()),
                true => Validation::Valid,
                false => match parse_text(&f, s) {
                    Ok(_) => Validation::Valid,
                    Err(reason) => Validation::Invalid(reason.into()),
                },
            })
        })
        .prompt()?;
    if answer.is_empty() {
        return Ok(None);
    }
    let v = parse_text(field, &answer).map_err(Stop::Io)?;
    check(field, &v).map_err(Stop::Io)?;
    Ok(Some(v))
}
