//! `POST /admin/snapshot`: a snapshot of every command acknowledged so far, written now and
//! answered once its file is on disk, for a backup point or before an upgrade. Each node
//! of a replicated group writes its own.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

use crate::auth::caller::Admin;
use crate::error::ApiError;
use crate::snapshots::Waited;
use crate::state::Shared;
use crate::wire::admin::SnapshotBody;

/// How long the answer waits for the file: inside the handlers' 10 s bound, so a slow
/// write is answered 202 (still writing) rather than timed out.
const PATIENCE: Duration = Duration::from_secs(8);

/// Takes a snapshot now and answers with its file.
#[utoipa::path(post, path = "/admin/snapshot", tag = "admin", security(("api_key" = [])),
    responses((status = 200, body = SnapshotBody), (status = 202, body = SnapshotBody),
        (status = 401, body = crate::error::ErrorBody), (status = 403, body = crate::error::ErrorBody),
        (status = 500, body = crate::error::ErrorBody), (status = 503, body = crate::error::ErrorBody)))]
pub async fn take(
    State(state): State<Shared>,
    _: Admin,
) -> Result<(StatusCode, Json<SnapshotBody>), ApiError> {
    // Every command acknowledged so far was sequenced by now; the snapshot that answers
    // the request holds the state after the batch that takes it, at this number or later.
    let target = state.runtime.stats().sequenced;
    let request = state.runtime.request_snapshot()?;
    match state.snapshots.wait_for(request, PATIENCE).await {
        Waited::Written(status) => {
            let sequence = status.last_seq.unwrap_or(target);
            let path = matchbook::store::snapshot_path(&state.data_dir, sequence);
            let file = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let body = SnapshotBody {
                written: true,
                sequence,
                file,
                bytes: Some(status.last_bytes),
            };
            Ok((StatusCode::OK, Json(body)))
        }
        Waited::Failed => Err(ApiError::SnapshotFailed),
        Waited::StillWriting => {
            let body = SnapshotBody {
                written: false,
                sequence: target,
                file: None,
                bytes: None,
            };
            Ok((StatusCode::ACCEPTED, Json(body)))
        }
    }
}
