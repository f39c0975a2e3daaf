//! The JSON of a ListTasks answer with `includeArtifacts: true`, which the
//! bindings write (a2a-spec.md §3.8).

use serde::Serialize;

use super::{ListTasksResponse, Task};

/// A [`ListTasksResponse`] answering `includeArtifacts: true`: every task
/// carries `artifacts`, `[]` when it has none (a2a-spec.md §3.8), where a
/// [`Task`] alone omits an empty list. Otherwise the same JSON.
pub struct ListTasksWithArtifacts<'a>(pub &'a ListTasksResponse);

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListTasksView<'a> {
    tasks: Vec<TaskWithArtifacts<'a>>,
    next_page_token: &'a str,
    page_size: i32,
    total_size: i32,
}

#[derive(Serialize)]
struct TaskWithArtifacts<'a> {
    #[serde(flatten)]
    task: &'a Task,
    /// Written only when the task's own field is skipped (no artifacts).
    #[serde(skip_serializing_if = "Option::is_none")]
    artifacts: Option<[(); 0]>,
}

impl Serialize for ListTasksWithArtifacts<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        ListTasksView {
            tasks: r
                .tasks
                .iter()
                .map(|task| TaskWithArtifacts {
                    task,
                    artifacts: task.artifacts.is_empty().then_some([]),
                })
                .collect(),
            next_page_token: &r.next_page_token,
            page_size: r.page_size,
            total_size: r.total_size,
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Artifact, Part, TaskState, TaskStatus};

    // a2a-spec.md §3.8: with includeArtifacts, `artifacts` is present even
    // when empty; everything else is the plain encoding.
    #[test]
    fn list_with_artifacts_writes_empty_lists() {
        let bare = Task {
            id: "t-1".into(),
            context_id: "c".into(),
            status: TaskStatus {
                state: TaskState::Working,
                ..TaskStatus::default()
            },
            ..Task::default()
        };
        let with = Task {
            id: "t-2".into(),
            artifacts: vec![Artifact {
                artifact_id: "a".into(),
                parts: vec![Part::text("x")],
                ..Artifact::default()
            }],
            ..bare.clone()
        };
        let page = ListTasksResponse {
            tasks: vec![bare, with.clone()],
            next_page_token: "n".into(),
            page_size: 2,
            total_size: 3,
        };
        assert_eq!(
            serde_json::to_string(&ListTasksWithArtifacts(&page)).unwrap(),
            r#"{"tasks":[{"id":"t-1","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"artifacts":[]},{"id":"t-2","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"}]}]}],"nextPageToken":"n","pageSize":2,"totalSize":3}"#
        );
        let only_full = ListTasksResponse {
            tasks: vec![with],
            ..page
        };
        assert_eq!(
            serde_json::to_string(&ListTasksWithArtifacts(&only_full)).unwrap(),
            serde_json::to_string(&only_full).unwrap()
        );
    }
}
