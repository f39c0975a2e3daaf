//! How call outcomes read to an MCP client: text content for the model, and
//! the same facts as structured content for programs.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::ANSWER_TOOL;
use crate::tool::agent::error_class;
use crate::tool::{Failure, InputRequest, ToolError, ToolErrorKind, ToolOutput};

/// The tool's answer: its text, not an error.
pub(super) fn output(output: ToolOutput) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(output.text)])
}

/// A definite failure: an error result with the cause, then the partial
/// output (if any) as a second text block.
pub(super) fn failed(failure: &Failure) -> CallToolResult {
    let cause = failure.to_string();
    let mut content = vec![ContentBlock::text(format!("The tool failed: {cause}"))];
    if let Some(partial) = failure.partial() {
        content.push(ContentBlock::text(partial.to_owned()));
    }
    let mut result = CallToolResult::error(content);
    let mut failed = json!({ "cause": cause });
    if let Some(partial) = failure.partial() {
        failed["partial"] = Value::String(partial.to_owned());
    }
    result.structured_content = Some(json!({ "failed": failed }));
    result
}

/// A question: not an error; says what was asked, the request id, and how to
/// answer (with the answer schema when there is one).
pub(super) fn input_required(request_id: &str, request: &InputRequest) -> CallToolResult {
    let mut text = format!(
        "The tool `{tool}` needs an answer before it can go on.\n\
         Question: {question}\n\
         Request id: {request_id}\n\
         To answer, call `{ANSWER_TOOL}` with {{\"request_id\": \"{request_id}\", \"answer\": ...}}.",
        tool = request.tool,
        question = request.question,
    );
    let mut asked = json!({
        "requestId": request_id,
        "tool": request.tool,
        "question": request.question,
    });
    if let Some(schema) = &request.answer_schema {
        text.push_str(&format!(
            "\nThe answer must be JSON, given as a string, valid against this schema: {schema}"
        ));
        asked["answerSchema"] = schema.clone();
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({ "inputRequired": asked }));
    result
}

/// An error whose outcome is not known: invalid arguments are the caller's
/// fault (the MCP invalid-params error); everything else is an error result
/// the model can read, with its class.
pub(super) fn tool_error(error: &ToolError) -> Result<CallToolResult, ErrorData> {
    if error.kind() == ToolErrorKind::InvalidInput {
        return Err(ErrorData::invalid_params(error.to_string(), None));
    }
    Ok(error_result(error_class(error.kind()), &error.to_string()))
}

/// An error result of class `kind` saying `message`.
pub(super) fn error_result(kind: &str, message: &str) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!("{kind}: {message}"))]);
    result.structured_content = Some(json!({ "error": { "kind": kind, "message": message } }));
    result
}
