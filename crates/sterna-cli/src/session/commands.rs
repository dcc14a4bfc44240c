//! The session's commands.

use super::{Outcome, Session};
use crate::drive::{self, Trace};
use crate::exit::CliError;
use crate::render;
use serde_json::{Map, Value};
use sterna::client::Call;

const HELP: &str = "commands:
  tools | prompts | resources | templates     list what the server offers
  describe NAME                               a tool or prompt in full
  call TOOL [NAME=VALUE… | ARGS_JSON]         call a tool (no arguments: asked field by field)
  get PROMPT [NAME=VALUE… | ARGS_JSON]        get a prompt (no arguments: asked)
  read URI|TEMPLATE                           read a resource (template variables asked)
  listen [tools] [prompts] [resources] [URI]  show change notifications as they arrive
  skills [list | show URI | load URI]         the server's skills; load verifies every file
  json [on|off]                               results as JSON or text
  wire [on|off]                               show every JSON-RPC message (→ sent, ← received)
  help | quit                                 (Ctrl-C stops a call; twice at the prompt quits)";

/// `word rest-of-line`.
fn split(line: &str) -> (&str, &str) {
    let line = line.trim();
    line.split_once(char::is_whitespace)
        .map_or((line, ""), |(a, b)| (a, b.trim()))
}

/// The arguments of `call`/`get`: a JSON object, or `NAME=VALUE` words (quoted as in a
/// shell, each value typed by `schema` as `--arg` does); `None` when there are none.
fn arguments(
    text: &str,
    schema: Option<&Map<String, Value>>,
) -> Result<Option<Map<String, Value>>, CliError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if text.starts_with(['{', '[']) {
        return match serde_json::from_str(text) {
            Ok(Value::Object(m)) => Ok(Some(m)),
            Ok(_) => Err(CliError::Usage("arguments must be a JSON object".into())),
            Err(e) => Err(CliError::Usage(format!("arguments: {e}"))),
        };
    }
    let words = shlex::split(text)
        .ok_or_else(|| CliError::Usage("arguments: a quote is not closed".into()))?;
    let mut args = Map::new();
    for word in words {
        let (k, v) = word.split_once('=').ok_or_else(|| {
            CliError::Usage(format!(
                "arguments: {word:?} is not NAME=VALUE (give NAME=VALUE words or a JSON object)"
            ))
        })?;
        let value = crate::widgets::args::typed(schema, k, v)
            .map_err(|e| CliError::Usage(format!("arguments: {k}: {e}")))?;
        args.insert(k.to_owned(), value);
    }
    Ok(Some(args))
}

impl Session {
    /// Refreshes the lists (and the names Tab completes). A server that offers none of
    /// a kind (no capability, or `-32601`) has an empty list; any other failure is
    /// returned, never taken for an empty list.
    pub(super) async fn refresh(&mut self) -> Result<(), CliError> {
        let c = &self.conn.client;
        let caps = &self.caps;
        self.tools = if caps.tools.is_some() {
            c.list_tools().await?
        } else {
            Vec::new()
        };
        self.prompts = if caps.prompts.is_some() {
            c.list_prompts().await?
        } else {
            Vec::new()
        };
        let (resources, templates) = if caps.resources.is_some() {
            (
                c.list_resources().await?,
                c.list_resource_templates().await?,
            )
        } else {
            (Vec::new(), Vec::new())
        };
        self.templates = templates;
        self.resources = resources.iter().map(|r| r.uri.clone()).collect();
        let mut n = self.names.lock().unwrap_or_else(|p| p.into_inner());
        n.tools = self.tools.iter().map(|t| t.name.clone()).collect();
        n.prompts = self.prompts.iter().map(|p| p.name.clone()).collect();
        n.resources = self.resources.clone();
        n.templates = self
            .templates
            .iter()
            .map(|t| t.uri_template.clone())
            .collect();
        Ok(())
    }

    /// Runs one command line.
    pub(super) async fn command(&mut self, line: &str) -> Outcome {
        let (word, rest) = split(line);
        let outcome = match word {
            "" => Ok(()),
            "quit" | "exit" => return Outcome::Quit,
            "help" | "?" => {
                println!("{HELP}");
                Ok(())
            }
            "json" => {
                self.json = rest != "off";
                println!("results as {}", if self.json { "JSON" } else { "text" });
                Ok(())
            }
            "wire" => {
                let on = rest != "off";
                crate::wire::global().set_shown(on);
                println!(
                    "wire {}",
                    if on {
                        "shown (→ sent, ← received)"
                    } else {
                        "hidden"
                    }
                );
                Ok(())
            }
            "tools" | "prompts" | "resources" | "templates" => tokio::select! {
                r = self.list(word) => r,
                () = crate::drive::interrupted() => Err(CliError::Interrupted("stopped listing".into())),
            },
            "describe" | "desc" => self.describe(rest),
            "call" => self.call(rest).await,
            "get" => self.get(rest).await,
            "read" => self.read(rest).await,
            "listen" => self.listen(rest),
            "skills" => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                crate::skills::run(&self.conn.client, &words, self.json).await
            }
            other => Err(CliError::Usage(format!(
                "unknown command {other:?} (type help)"
            ))),
        };
        match outcome {
            Ok(()) => Outcome::Next,
            Err(e @ CliError::Interrupted(_)) => {
                eprintln!("  ✗ {e} (Ctrl-C again quits)");
                Outcome::Interrupted
            }
            Err(e) => {
                eprintln!("error: {e}");
                Outcome::Next
            }
        }
    }

    async fn list(&mut self, what: &str) -> Result<(), CliError> {
        self.refresh().await?;
        let c = &self.conn.client;
        let text = match what {
            "tools" => render::tools(&self.tools),
            "prompts" => render::prompts(&self.prompts),
            "resources" => render::resources(&c.list_resources().await?),
            _ => render::templates(&self.templates),
        };
        println!(
            "{}",
            if text.is_empty() {
                format!("  (no {what})")
            } else {
                text
            }
        );
        Ok(())
    }

    fn describe(&self, name: &str) -> Result<(), CliError> {
        if let Some(t) = self.tools.iter().find(|t| t.name == name) {
            println!("{}", render::describe_tool(t));
        } else if let Some(p) = self.prompts.iter().find(|p| p.name == name) {
            println!("{}", render::describe_prompt(p));
        } else {
            return Err(CliError::Usage(format!(
                "no tool or prompt called {name:?}"
            )));
        }
        Ok(())
    }

    async fn call(&mut self, rest: &str) -> Result<(), CliError> {
        let (name, words) = split(rest);
        let tool = self.tools.iter().find(|t| t.name == name).cloned();
        let schema = tool.as_ref().map(|t| &t.input_schema);
        let args = match (arguments(words, schema)?, tool) {
            (Some(a), _) => a,
            (None, Some(t)) => {
                let schema = t.input_schema.clone();
                self.conn
                    .ui
                    .exclusive(move || crate::widgets::args::ask_all(&schema))
                    .await?
                    .map_err(|_| CliError::Usage("call abandoned".into()))?
            }
            (None, None) => {
                return Err(CliError::Usage(format!(
                    "no tool called {name:?} (try tools)"
                )));
            }
        };
        let r = drive::run(
            &self.conn,
            Call::tool(name, Value::Object(args)),
            Trace::Rounds,
        )
        .await?;
        println!(
            "{}",
            if self.json {
                render::json(&r)
            } else {
                render::tool_result(&r)
            }
        );
        Ok(())
    }

    async fn get(&mut self, rest: &str) -> Result<(), CliError> {
        let (name, words) = split(rest);
        let prompt = self.prompts.iter().find(|p| p.name == name);
        let schema = prompt.map(prompt_schema);
        let args = match arguments(words, schema.as_ref())? {
            Some(a) => a,
            None => {
                let schema = schema.ok_or_else(|| {
                    CliError::Usage(format!("no prompt called {name:?} (try prompts)"))
                })?;
                self.conn
                    .ui
                    .exclusive(move || crate::widgets::args::ask_all(&schema))
                    .await?
                    .map_err(|_| CliError::Usage("abandoned".into()))?
            }
        };
        let r = drive::run(
            &self.conn,
            Call::prompt(name, Value::Object(args)),
            Trace::Rounds,
        )
        .await?;
        println!(
            "{}",
            if self.json {
                render::json(&r)
            } else {
                render::prompt_result(&r)
            }
        );
        Ok(())
    }

    async fn read(&mut self, uri: &str) -> Result<(), CliError> {
        let uri = if uri.contains('{') {
            self.expand(uri).await?
        } else {
            uri.to_owned()
        };
        if uri.is_empty() {
            return Err(CliError::Usage("read URI".into()));
        }
        let r = drive::run(&self.conn, Call::resource(uri), Trace::Rounds).await?;
        println!(
            "{}",
            if self.json {
                render::json(&r)
            } else {
                render::resource_result(&r)
            }
        );
        Ok(())
    }

    /// Asks the variables of a URI template (`{name}` parts) and fills them in.
    async fn expand(&self, template: &str) -> Result<String, CliError> {
        let vars: Vec<String> = template
            .split('{')
            .skip(1)
            .filter_map(|p| p.split_once('}').map(|(v, _)| v.to_owned()))
            .collect();
        let props: Map<String, Value> = vars
            .iter()
            .map(|v| (v.clone(), serde_json::json!({"type": "string"})))
            .collect();
        let schema: Map<String, Value> = serde_json::from_value(
            serde_json::json!({"type": "object", "properties": props, "required": vars}),
        )
        .unwrap_or_default();
        let values = self
            .conn
            .ui
            .exclusive(move || crate::widgets::args::ask_all(&schema))
            .await?
            .map_err(|_| CliError::Usage("abandoned".into()))?;
        let mut out = template.to_owned();
        for (k, v) in values {
            out = out.replace(&format!("{{{k}}}"), v.as_str().unwrap_or_default());
        }
        Ok(out)
    }

    fn listen(&self, rest: &str) -> Result<(), CliError> {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let all = words.is_empty();
        let has = |w: &str| all || words.contains(&w);
        let mut uris: Vec<&str> = words.iter().copied().filter(|w| w.contains(':')).collect();
        if all {
            // No words: every list, and every resource the server listed.
            uris = self.resources.iter().map(String::as_str).collect();
        }
        let params = serde_json::json!({"notifications": {
            "toolsListChanged": has("tools"), "promptsListChanged": has("prompts"),
            "resourcesListChanged": has("resources"), "resourceSubscriptions": uris}});
        let client = self.conn.client.clone();
        let ui = self.conn.ui.clone();
        tokio::spawn(async move {
            let params = params.as_object().cloned().unwrap_or_default();
            match client.raw_request("subscriptions/listen", params).await {
                Ok(_) => ui.note("  ⟳ the server closed the subscription"),
                Err(e) => ui.note(format!("  ⟳ the subscription ended: {e}")),
            }
        });
        println!("listening in the background; changes show as they arrive");
        Ok(())
    }
}

/// A prompt's arguments as an object schema of strings.
fn prompt_schema(p: &sterna::types::prompts::Prompt) -> Map<String, Value> {
    let args = p.arguments.clone().unwrap_or_default();
    let props: Map<String, Value> = args
        .iter()
        .map(|a| {
            (
                a.name.clone(),
                serde_json::json!({"type": "string", "description": a.description}),
            )
        })
        .collect();
    let required: Vec<&str> = args
        .iter()
        .filter(|a| a.required == Some(true))
        .map(|a| a.name.as_str())
        .collect();
    serde_json::from_value(
        serde_json::json!({"type": "object", "properties": props, "required": required}),
    )
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        serde_json::from_value(json!({"type": "object", "properties": {
            "name": {"type": "string"}, "count": {"type": "integer"}, "loud": {"type": "boolean"}}}))
        .unwrap()
    }

    #[test]
    fn arguments_as_name_value_words_typed_by_the_schema() {
        let a = arguments(r#"name="eu west" count=3 loud=true"#, Some(&schema()))
            .unwrap()
            .unwrap();
        assert_eq!(
            Value::Object(a),
            json!({"name": "eu west", "count": 3, "loud": true})
        );
        // A string property keeps digits as text; a word may be quoted whole.
        let a = arguments(r#""name=42" count=1"#, Some(&schema()))
            .unwrap()
            .unwrap();
        assert_eq!(a["name"], "42");
    }

    #[test]
    fn arguments_as_json_and_the_errors_say_what_is_expected() {
        let a = arguments(r#"{"name": "x"}"#, Some(&schema()))
            .unwrap()
            .unwrap();
        assert_eq!(a["name"], "x");
        assert!(arguments("  ", None).unwrap().is_none());
        for (bad, says) in [
            ("orders", "NAME=VALUE"),
            ("count=many", "count"),
            ("[1]", "JSON object"),
            (r#"{"name": "#, "arguments"),
            (r#"name="unclosed"#, "quote"),
        ] {
            let e = arguments(bad, Some(&schema())).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
