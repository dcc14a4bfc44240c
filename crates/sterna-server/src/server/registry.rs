//! Registering tools, prompts and resources at build time: every check, and the wire
//! descriptions the lists are rendered from.

use super::lists::Catalog;
use super::prompt::PromptDef;
use super::resource::{ResourceDef, ResourceKind};
use super::routes::{PromptEntry, ResourceEntry, Routes, TemplateEntry, ToolEntry};
use super::tool::ToolDef;
use crate::definition::DefinitionError;
use crate::error::BuildError;
use std::sync::Arc;

/// Entries and their wire descriptions, built up one registration at a time.
#[derive(Default)]
pub(crate) struct Registry {
    entries: Routes,
    catalog: Catalog,
}

fn valid_tool_name(n: &str) -> bool {
    (1..=128).contains(&n.len())
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn invalid(name: &str, reason: DefinitionError) -> BuildError {
    BuildError::Invalid {
        name: name.to_owned(),
        reason,
    }
}

impl Registry {
    pub(crate) fn add_tool(&mut self, def: ToolDef) -> Result<(), BuildError> {
        let name = def.tool.name.clone();
        if !valid_tool_name(&name) {
            return Err(BuildError::InvalidName(name));
        }
        let mut schema = def.input_schema.map_err(|r| invalid(&name, r))?;
        if self.entries.tools.contains_key(&name) {
            return Err(BuildError::Duplicate { kind: "tool", name });
        }
        if def.tool.single_use && def.tool.unsolicited {
            return Err(BuildError::Conflicting {
                name,
                options: "single_use + accept_unsolicited_answers",
            });
        }
        let headers = sterna_types::mirror::header_params(&mut schema)
            .map_err(|r| invalid(&name, r.into()))?;
        self.catalog.tools.push(sterna_types::tools::Tool {
            name: name.clone(),
            title: def.tool.title.clone(),
            description: def.tool.description.clone(),
            input_schema: schema,
            output_schema: None,
            annotations: def.tool.annotations.clone(),
            icons: def.tool.icons.clone(),
            meta: def.tool.meta.clone(),
        });
        self.entries.mirrored |= !headers.is_empty();
        let entry = ToolEntry {
            name: Arc::from(name.as_str()),
            handler: def.handler,
            single_use: def.tool.single_use,
            unsolicited: def.tool.unsolicited,
            declared: def.declared,
            settings: def.tool.settings,
            headers,
        };
        self.entries.tools.insert(name, entry);
        Ok(())
    }

    pub(crate) fn add_prompt(&mut self, def: PromptDef) -> Result<(), BuildError> {
        let name = def.prompt.name.clone();
        let arguments = def.arguments.map_err(|r| invalid(&name, r))?;
        if self.entries.prompts.contains_key(&name) {
            return Err(BuildError::Duplicate {
                kind: "prompt",
                name,
            });
        }
        self.entries.completions |= !def.prompt.completions.is_empty();
        self.catalog.prompts.push(sterna_types::prompts::Prompt {
            name: name.clone(),
            title: def.prompt.title.clone(),
            description: def.prompt.description.clone(),
            arguments: (!arguments.is_empty()).then_some(arguments),
            icons: def.prompt.icons.clone(),
            meta: None,
        });
        let entry = PromptEntry {
            name: Arc::from(name.as_str()),
            handler: def.handler,
            completions: def.prompt.completions,
        };
        self.entries.prompts.insert(name, entry);
        Ok(())
    }

    pub(crate) fn add_resource(&mut self, def: ResourceDef) -> Result<(), BuildError> {
        if let Some(reason) = def.error.clone() {
            return Err(invalid(def.name(), reason));
        }
        let entry = ResourceEntry {
            handler: def.handler.clone(),
            mime: def.describe.mime_type.clone(),
            cache: def.describe.cache,
        };
        if let Some(wire) = def.wire_resource() {
            if self.entries.resources.contains_key(&wire.uri) {
                return Err(BuildError::Duplicate {
                    kind: "resource",
                    name: wire.uri,
                });
            }
            self.entries.resources.insert(wire.uri.clone(), entry);
            self.catalog.resources.push(wire);
            return Ok(());
        }
        let Some(wire) = def.wire_template() else {
            return Ok(());
        };
        let ResourceKind::Template {
            parsed: Some(parsed),
            completions,
            ..
        } = def.kind
        else {
            let reason = DefinitionError::UriTemplate {
                template: wire.uri_template.clone(),
                problem: crate::TemplateProblem::Unbalanced,
            };
            return Err(invalid(&wire.uri_template, reason));
        };
        if self
            .entries
            .templates
            .iter()
            .any(|t| t.template == wire.uri_template)
        {
            return Err(BuildError::Duplicate {
                kind: "resource template",
                name: wire.uri_template,
            });
        }
        self.entries.completions |= !completions.is_empty();
        self.entries.templates.push(TemplateEntry {
            template: wire.uri_template.clone(),
            parsed,
            entry,
            completions,
        });
        self.catalog.templates.push(wire);
        Ok(())
    }

    /// The entries, and the catalog the lists are rendered from.
    pub(crate) fn finish(mut self) -> (Routes, Catalog) {
        self.catalog.completions = self.entries.completions;
        (self.entries, self.catalog)
    }
}
