//! One ONNX Runtime session with Braid's three BERT-style inputs and one float output.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Mutex;

use braid_core::{Error, Result};
use ort::session::{Session, SessionInputValue};
use ort::value::TensorRef;

use crate::runtime::{environment, panic_message};
use crate::tokenize::Batch;

/// A loaded model: the session (behind a mutex, `run` needs `&mut`), its input names and the
/// output it reads.
pub(crate) struct ModelSession {
    session: Mutex<Session>,
    inputs: Vec<Input>,
    output: String,
    /// The output's declared dimensions (`-1` where dynamic).
    output_dims: Vec<i64>,
}

#[derive(Clone, Copy)]
enum Input {
    Ids,
    Mask,
    Types,
}

fn model_err(context: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Model { reason: format!("{context} {}: {e}", path.display()) }
}

impl ModelSession {
    /// Loads `path` with `intra_threads` threads, reading the output `output` (or the first
    /// output when the model has no output of that name).
    pub(crate) fn open(path: &Path, intra_threads: usize, output: &str) -> Result<Self> {
        if !path.is_file() {
            return Err(Error::Model { reason: format!("model file {} is missing", path.display()) });
        }
        let env = environment()?;
        let session = catch_unwind(AssertUnwindSafe(|| -> ort::Result<Session> {
            Session::builder(env)?.with_intra_threads(intra_threads)?.with_inter_threads(1)?.commit_from_file(path)
        }))
        .map_err(|p| model_err("cannot load", path, panic_message(p.as_ref())))?
        .map_err(|e| Error::model_failed(format!("cannot load {}", path.display()), e))?;

        let mut inputs = Vec::new();
        for outlet in session.inputs() {
            inputs.push(match outlet.name() {
                "input_ids" => Input::Ids,
                "attention_mask" => Input::Mask,
                "token_type_ids" => Input::Types,
                other => {
                    return Err(model_err(
                        "unsupported model",
                        path,
                        format!("unexpected input `{other}` (expected input_ids, attention_mask, token_type_ids)"),
                    ))
                }
            });
        }
        let outlet = session
            .outputs()
            .iter()
            .find(|o| o.name() == output)
            .or_else(|| session.outputs().first())
            .ok_or_else(|| model_err("unsupported model", path, "the model has no output"))?;
        let output_dims = outlet.dtype().tensor_shape().map(|s| s.to_vec()).unwrap_or_default();
        let output = outlet.name().to_owned();
        Ok(ModelSession { session: Mutex::new(session), inputs, output, output_dims })
    }

    /// The output's declared dimensions (`-1` where dynamic, empty when unknown).
    pub(crate) fn output_dims(&self) -> &[i64] {
        &self.output_dims
    }

    /// Runs one batch and hands the output's shape and data to `read`.
    pub(crate) fn run<R>(&self, batch: &Batch, read: impl FnOnce(&[i64], &[f32]) -> Result<R>) -> Result<R> {
        let run_err = |e: ort::Error| Error::model_failed("inference failed", e);
        let broken = |why: String| Error::Model { reason: format!("inference failed: {why}") };
        let mut values: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = Vec::with_capacity(self.inputs.len());
        let mut session = self.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let names: Vec<String> = session.inputs().iter().map(|o| o.name().to_owned()).collect();
        for (name, input) in names.into_iter().zip(&self.inputs) {
            let array = match input {
                Input::Ids => &batch.input_ids,
                Input::Mask => &batch.attention_mask,
                Input::Types => &batch.token_type_ids,
            };
            let tensor = TensorRef::from_array_view(array).map_err(run_err)?;
            values.push((Cow::Owned(name), tensor.into()));
        }
        let outputs = catch_unwind(AssertUnwindSafe(|| session.run(values)))
            .map_err(|p| broken(panic_message(p.as_ref())))?
            .map_err(run_err)?;
        let value = outputs.get(&self.output).ok_or_else(|| broken(format!("output `{}` missing", self.output)))?;
        let (shape, data) = value.try_extract_tensor::<f32>().map_err(run_err)?;
        read(shape, data)
    }
}
