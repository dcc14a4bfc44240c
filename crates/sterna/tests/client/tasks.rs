//! The client follows tasks: `run` returns the final result whatever shape the server
//! chose, answering in-task questions with the same handlers; a dropped or timed-out call
//! cancels its task.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use sterna::client::{Call, Client, ClientError, GaveUp, ServerEvent, Step};
use sterna::server::mrtr::form;
use sterna::server::tasks::TaskSupport;
use sterna::server::{Context, NoArgs, Tool};
use sterna::server::{HandlerError, Server};
use sterna::types::elicitation::{ElicitFormParams, ElicitResult};
use sterna::types::error::ErrorObject;
use sterna::types::tasks::TaskStatus;

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Color {
    color: String,
}

fn server() -> Server {
    Server::builder("tasks", "1")
        .ephemeral_state_keys()
        .task_poll_interval(Duration::from_millis(10))
        .tool(Tool::new("wizard").task(TaskSupport::Required).handler(
            |ctx: Context, _: NoArgs| async move {
                let n = ctx.ask(form::<Name>("Name?").key("name")).await?;
                let c = ctx.ask(form::<Color>("Colour?").key("color")).await?;
                Ok::<_, HandlerError>(format!(
                    "{} likes {}",
                    n.required()?.name,
                    c.required()?.color
                ))
            },
        ))
        .tool(
            Tool::new("maybe")
                .task(TaskSupport::Optional)
                .handler(|_: Context, _: NoArgs| async { "done" }),
        )
        .tool(Tool::new("slow").task(TaskSupport::Required).handler(
            |_: Context, _: NoArgs| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "never"
            },
        ))
        .tool(Tool::new("broken").task(TaskSupport::Required).handler(
            |_: Context, _: NoArgs| async {
                Err::<String, _>(HandlerError::rpc(ErrorObject::internal("it broke")))
            },
        ))
        .build()
        .unwrap()
}

fn answering(form: ElicitFormParams) -> std::future::Ready<ElicitResult> {
    let mut content = serde_json::Map::new();
    for (name, _) in &form.requested_schema.properties {
        let v = if name == "name" {
            json!("Ada")
        } else {
            json!("teal")
        };
        content.insert(name.clone(), v);
    }
    std::future::ready(ElicitResult::accept(content))
}

fn client(tasks: bool, seen: Arc<Mutex<Vec<TaskStatus>>>) -> sterna::client::ClientBuilder {
    Client::builder("tasks-client", "0")
        .tasks(tasks)
        .on_elicit(answering)
        .on_event(move |e| {
            if let ServerEvent::Task(t) = e {
                seen.lock().unwrap().push(t.task.status);
            }
        })
}

#[tokio::test]
async fn run_follows_a_task_and_answers_its_questions_with_the_handlers() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let c = client(true, seen.clone()).in_process(server());
    let r = c.call_tool("wizard", ()).await.unwrap();
    assert_eq!(r.text_content(), "Ada likes teal");
    let seen = seen.lock().unwrap().clone();
    assert!(seen.contains(&TaskStatus::InputRequired), "{seen:?}");
    assert_eq!(seen.last(), Some(&TaskStatus::Completed));
    // A failed task is the server's error.
    match c.call_tool("broken", ()).await {
        Err(ClientError::Server(e)) => assert_eq!(e.code.0, -32603),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn without_the_extension_there_is_no_task() {
    let c = client(false, Arc::default()).in_process(server());
    assert_eq!(
        c.call_tool("maybe", ()).await.unwrap().text_content(),
        "done"
    );
    match c.call_tool("wizard", ()).await {
        Err(ClientError::Server(e)) => assert_eq!(e.code.0, -32021),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_call_out_of_time_cancels_its_task() {
    let c = client(true, Arc::default())
        .time_budget(Duration::from_millis(200))
        .in_process(server());
    let Step::Task(task) = c.start(Call::tool("slow", ())).await.unwrap() else {
        panic!("a task");
    };
    let id = task.id().to_owned();
    let r = tokio::time::timeout(Duration::from_millis(100), c.follow(task)).await;
    assert!(r.is_err(), "still running");
    let mut status = TaskStatus::Working;
    for _ in 0..1000 {
        status = c.task(&id).await.unwrap().task.status;
        if status == TaskStatus::Cancelled {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        status,
        TaskStatus::Cancelled,
        "dropping the call cancelled the task"
    );
    match c.call_tool("slow", ()).await {
        Err(ClientError::GaveUp(GaveUp::TimeBudget(_))) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn over_http_with_mcp_name_headers() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(
        sterna::server::http::HttpServer::new(server()).serve_with_shutdown(listener, async {
            let _ = stopped.await;
        }),
    );
    let c = client(true, Arc::default()).connect_http(&url).unwrap();
    assert_eq!(
        c.call_tool("wizard", ()).await.unwrap().text_content(),
        "Ada likes teal"
    );
    let _ = stop.send(());
    let _ = serving.await;
}
