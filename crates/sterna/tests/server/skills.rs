//! The skills wing on the wire, over the stream transport: `skills/list` (pages, cursors
//! bound to the catalog), `skills/get`, `resources/directory/read`, the files through
//! `resources/read`, in both eras (2026-07-28 stamps only on 2026-07-28), the capability
//! declared inline, dynamic skills, and a reload announcing the change.

use super::fixture::server_with;
use super::skills_dir::two_skills;
use super::wire::{Wire, meta};
use base64::Engine;
use serde_json::{Value, json};
use sterna::server::skills::{SkillDef, Skills};
use sterna::server::{Server, ServerBuilder};
use sterna::types::skills::digest;

fn serve(skills: &Skills) -> Server {
    server_with(|b| b.skills(skills.clone())).0
}

fn params(extra: Value) -> Value {
    let mut p = json!({"_meta": meta(json!({}))});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    p
}

async fn legacy(srv: &Server) -> (Wire, Value) {
    let mut w = Wire::new(srv);
    w.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    let init = w.recv().await;
    w.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    (w, init)
}

async fn legacy_request(w: &mut Wire, id: i64, method: &str, params: Value) -> Value {
    w.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await;
    loop {
        let m = w.recv().await;
        if m["id"] == id {
            return m;
        }
        w.notifications.push(m);
    }
}

#[tokio::test]
async fn the_extension_is_off_unless_plugged_in() {
    let (srv, _) = server_with(|b: ServerBuilder<_>| b);
    let mut w = Wire::new(&srv);
    let d = w.request("server/discover", params(json!({}))).await;
    assert!(
        d["result"]["capabilities"].get("extensions").is_none(),
        "{d}"
    );
    let r = w.request("skills/list", params(json!({}))).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
}

#[tokio::test]
async fn modern_lists_in_whole_entries_per_page_with_cache_stamps() {
    let d = two_skills("wire-list");
    let skills = Skills::builder().dir(d.path()).page_size(2).load().unwrap();
    let srv = serve(&skills);
    let mut w = Wire::new(&srv);
    let disc = w.request("server/discover", params(json!({}))).await;
    let caps = &disc["result"]["capabilities"];
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert_eq!(caps["resources"]["listChanged"], true);
    let first = w.request("skills/list", params(json!({}))).await;
    let r = &first["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        (r["ttlMs"].clone(), r["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
    assert_eq!(r["skills"].as_array().unwrap().len(), 2);
    let cursor = r["nextCursor"].as_str().unwrap().to_owned();
    let second = w
        .request("skills/list", params(json!({"cursor": cursor})))
        .await;
    let page2 = second["result"]["skills"].as_array().unwrap();
    assert_eq!(page2.len(), 1);
    assert_eq!(page2[0]["uri"], "skill://pdf-processing/SKILL.md");
    assert!(second["result"].get("nextCursor").is_none());
    let bad = w
        .request("skills/list", params(json!({"cursor": "nope"})))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // A cursor of another catalog (after a change and a reload) is refused.
    d.write("pdf-processing/references/NEW.md", "new");
    assert!(skills.reload_blocking().unwrap());
    let stale = w
        .request("skills/list", params(json!({"cursor": cursor})))
        .await;
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
}

#[tokio::test]
async fn modern_get_read_and_directories() {
    let d = two_skills("wire-get");
    let skills = Skills::from_dir(d.path()).unwrap();
    let srv = serve(&skills);
    let mut w = Wire::new(&srv);
    let uri = "skill://pdf-processing/SKILL.md";
    let got = w.request("skills/get", params(json!({"uri": uri}))).await;
    let r = &got["result"];
    assert_eq!(r["skill"]["uri"], uri);
    assert!(r.get("nextCursor").is_none() && r["ttlMs"].is_u64() && r["cacheScope"].is_string());
    let missing = w
        .request(
            "skills/get",
            params(json!({"uri": "skill://nope/SKILL.md"})),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    // Files are read as they were hashed: text when UTF-8, else a blob.
    let read = w
        .request("resources/read", params(json!({"uri": uri})))
        .await;
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert_eq!(read["result"]["contents"][0]["mimeType"], "text/markdown");
    assert_eq!(
        digest(text.as_bytes()),
        r["skill"]["resources"][0]["digest"]
    );
    let bin = w
        .request(
            "resources/read",
            params(json!({"uri": "skill://docs/release-notes/logo.bin"})),
        )
        .await;
    let blob = bin["result"]["contents"][0]["blob"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .unwrap();
    assert_eq!(bytes, [0u8, 159, 146, 150, 255]);
    let gone = w
        .request(
            "resources/read",
            params(json!({"uri": "skill://pdf-processing/nope.md"})),
        )
        .await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert_eq!(
        gone["error"]["data"]["uri"],
        "skill://pdf-processing/nope.md"
    );
    // resources/list shows every SKILL.md, named and described by its frontmatter.
    let list = w.request("resources/list", params(json!({}))).await;
    let row = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == uri)
        .unwrap()
        .clone();
    assert_eq!(
        (row["name"].clone(), row["mimeType"].clone()),
        (json!("pdf-processing"), json!("text/markdown"))
    );
    assert_eq!(row["description"], "Extract text from PDFs");
    let root = w
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://docs/release-notes"})),
        )
        .await;
    let kids: Vec<(String, String)> = root["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["mimeType"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        kids,
        [
            ("SKILL.md".into(), "text/markdown".into()),
            ("checklist".into(), "inode/directory".into()),
            ("guides".into(), "inode/directory".into()),
            ("logo.bin".into(), "application/octet-stream".into()),
            ("templates".into(), "inode/directory".into()),
        ]
    );
    let sub = w
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://docs/release-notes/guides"})),
        )
        .await;
    assert_eq!(
        sub["result"]["resources"][0]["uri"],
        "skill://docs/release-notes/guides/STYLE.md"
    );
    let not_dir = w
        .request("resources/directory/read", params(json!({"uri": uri})))
        .await;
    assert_eq!(not_dir["error"]["code"], -32602, "{not_dir}");
    let outside = w
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://docs"})),
        )
        .await;
    assert_eq!(outside["error"]["code"], -32602, "{outside}");
}

#[tokio::test]
async fn without_directory_read_the_method_is_unknown() {
    let d = two_skills("wire-nodir");
    let skills = Skills::builder()
        .dir(d.path())
        .directory_read(false)
        .load()
        .unwrap();
    let mut w = Wire::new(&serve(&skills));
    let disc = w.request("server/discover", params(json!({}))).await;
    assert_eq!(
        disc["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({})
    );
    let r = w
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://pdf-processing"})),
        )
        .await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
}

#[tokio::test]
async fn legacy_sessions_get_the_same_skills_without_2026_stamps() {
    let d = two_skills("wire-legacy");
    let skills = Skills::from_dir(d.path()).unwrap();
    let srv = serve(&skills);
    let (mut w, init) = legacy(&srv).await;
    let caps = &init["result"]["capabilities"];
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true}),
        "{init}"
    );
    assert!(caps["resources"].is_object());
    let list = legacy_request(&mut w, 1, "skills/list", json!({})).await;
    let r = &list["result"];
    assert_eq!(r["skills"].as_array().unwrap().len(), 3, "{list}");
    for banned in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(r.get(banned).is_none(), "{banned} on 2025-11-25: {list}");
    }
    let got = legacy_request(
        &mut w,
        2,
        "skills/get",
        json!({"uri": "skill://pdf-processing/SKILL.md"}),
    )
    .await;
    assert_eq!(
        got["result"]["skill"]["frontmatter"]["name"],
        "pdf-processing"
    );
    assert!(got["result"].get("ttlMs").is_none(), "{got}");
    let unknown = legacy_request(
        &mut w,
        3,
        "skills/get",
        json!({"uri": "skill://x/SKILL.md"}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602);
    let gone = legacy_request(
        &mut w,
        4,
        "resources/read",
        json!({"uri": "skill://pdf-processing/nope.md"}),
    )
    .await;
    assert_eq!(gone["error"]["code"], -32002, "{gone}");
    let dir = legacy_request(
        &mut w,
        5,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing"}),
    )
    .await;
    assert_eq!(
        dir["result"]["resources"].as_array().unwrap().len(),
        2,
        "{dir}"
    );
    let read = legacy_request(
        &mut w,
        6,
        "resources/read",
        json!({"uri": "skill://pdf-processing/references/FORMS.md"}),
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], "# Forms\n");
    assert!(read["result"].get("ttlMs").is_none());
    let bad = legacy_request(&mut w, 7, "skills/get", json!({"url": 1})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[tokio::test]
async fn a_reload_serves_the_new_bytes_and_announces_the_change() {
    let d = two_skills("wire-reload");
    let skills = Skills::from_dir(d.path()).unwrap();
    let srv = serve(&skills);
    let (mut w, _) = legacy(&srv).await;
    let forms = "skill://pdf-processing/references/FORMS.md";
    // The file changes on disk: what is served is still the bytes that were hashed.
    d.write("pdf-processing/references/FORMS.md", "# Forms, changed\n");
    let read = legacy_request(&mut w, 1, "resources/read", json!({"uri": forms})).await;
    assert_eq!(read["result"]["contents"][0]["text"], "# Forms\n");
    assert!(skills.reload().await.unwrap(), "the file changed");
    let note = w.recv().await;
    assert_eq!(
        note["method"], "notifications/resources/list_changed",
        "{note}"
    );
    let read = legacy_request(&mut w, 2, "resources/read", json!({"uri": forms})).await;
    assert_eq!(read["result"]["contents"][0]["text"], "# Forms, changed\n");
    let got = legacy_request(
        &mut w,
        3,
        "skills/get",
        json!({"uri": "skill://pdf-processing/SKILL.md"}),
    )
    .await;
    let files = got["result"]["skill"]["resources"].as_array().unwrap();
    assert_eq!(files[1]["digest"], digest(b"# Forms, changed\n"));
    // Nothing changed: no announcement.
    assert!(!skills.reload().await.unwrap());
    // A broken folder keeps the catalog being served.
    d.write("pdf-processing/bad name.md", "x");
    assert!(skills.reload().await.is_err());
    assert_eq!(skills.entries().len(), 3);
}

#[tokio::test]
async fn dynamic_skills_are_marked_and_generated_at_read_time() {
    let md = "---\nname: nightly-report\ndescription: Summarise last night's jobs\n---\nRead report.md\n";
    let def = SkillDef::dynamic("ops/nightly-report", md, |rel: String| async move {
        (rel == "report.md").then(|| b"3 jobs failed\n".to_vec())
    })
    .listing(["report.md"]);
    let skills = Skills::builder().skill(def).load().unwrap();
    let mut w = Wire::new(&serve(&skills));
    let list = w.request("skills/list", params(json!({}))).await;
    assert_eq!(list["result"]["skills"][0]["resources"], "dynamic");
    let read = w
        .request(
            "resources/read",
            params(json!({"uri": "skill://ops/nightly-report/report.md"})),
        )
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "3 jobs failed\n");
    let gone = w
        .request(
            "resources/read",
            params(json!({"uri": "skill://ops/nightly-report/other.md"})),
        )
        .await;
    assert_eq!(gone["error"]["code"], -32602);
    let dir = w
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://ops/nightly-report"})),
        )
        .await;
    assert_eq!(
        dir["result"]["resources"].as_array().unwrap().len(),
        2,
        "{dir}"
    );
}

#[tokio::test]
async fn a_reload_reaches_2026_listeners_too() {
    let d = two_skills("wire-listen");
    let skills = Skills::from_dir(d.path()).unwrap();
    let mut w = Wire::new(&serve(&skills));
    let listen_id = json!(900);
    w.send(&json!({"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen",
                   "params": {"notifications": {"resourcesListChanged": true}, "_meta": meta(json!({}))}}))
        .await;
    let ack = w.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    d.write(
        "code-review/SKILL.md",
        super::skills_dir::skill_md("code-review", "Review diffs"),
    );
    assert!(skills.reload().await.unwrap());
    let change = w.recv().await;
    assert_eq!(
        change["method"], "notifications/resources/list_changed",
        "{change}"
    );
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen_id
    );
}

#[tokio::test]
async fn replicas_loading_the_same_folder_accept_each_others_cursors() {
    let d = two_skills("wire-replicas");
    let load = || Skills::builder().dir(d.path()).page_size(1).load().unwrap();
    let (a, b) = (serve(&load()), serve(&load()));
    let (mut wa, mut wb) = (Wire::new(&a), Wire::new(&b));
    let first = wa.request("skills/list", params(json!({}))).await;
    let cursor = first["result"]["nextCursor"].clone();
    let second = wb
        .request("skills/list", params(json!({"cursor": cursor})))
        .await;
    assert_eq!(
        second["result"]["skills"][0]["uri"], "skill://docs/release-notes/checklist/SKILL.md",
        "{second}"
    );
    let on_a = wa
        .request(
            "skills/get",
            params(json!({"uri": "skill://pdf-processing/SKILL.md"})),
        )
        .await;
    let on_b = wb
        .request(
            "skills/get",
            params(json!({"uri": "skill://pdf-processing/SKILL.md"})),
        )
        .await;
    assert_eq!(
        on_a["result"]["skill"], on_b["result"]["skill"],
        "the same entry, digests included"
    );
}
