//! Vectors between numpy and Braid.
//!
//! Arrays are read where they lie: a C-contiguous `float32` array is read through its buffer
//! (numpy's `asarray` returns the same object), and the only copy is into the `Vec<f32>` that
//! `braid::Record::vector` and `braid::SearchRequest::vector` own. Arrays of another dtype or
//! layout, and plain sequences, are converted by numpy once.

use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;

use crate::errors::invalid;

/// `obj` as a float32 ndarray: the same object when it already is one.
fn float32<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
    if let Ok(array) = obj.cast::<PyArrayDyn<f32>>() {
        return Ok(array.clone());
    }
    let numpy = obj.py().import("numpy")?;
    let converted = numpy
        .call_method1("asarray", (obj, "float32"))
        .map_err(|e| invalid(format!("a vector must be an array of numbers: {e}")))?;
    Ok(converted.cast_into::<PyArrayDyn<f32>>()?)
}

/// One vector: a 1-D array (or sequence) of numbers.
pub(crate) fn vector(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
    let array = float32(obj)?;
    if array.ndim() != 1 {
        return Err(invalid(format!("a vector must be 1-dimensional, got shape {:?}", array.shape())));
    }
    let view = array.readonly();
    Ok(match view.as_slice() {
        Ok(slice) => slice.to_vec(),
        Err(_) => view.as_array().iter().copied().collect(),
    })
}

/// The rows of a 2-D array (or sequence of sequences) of numbers, `expected` of them.
pub(crate) fn rows(obj: &Bound<'_, PyAny>, expected: usize) -> PyResult<Vec<Vec<f32>>> {
    let array = float32(obj)?;
    let shape = array.shape().to_vec();
    if shape.len() != 2 {
        return Err(invalid(format!("vectors must be a 2-dimensional array, got shape {shape:?}")));
    }
    if shape[0] != expected {
        return Err(invalid(format!("{} vectors for {expected} records", shape[0])));
    }
    let view = array.readonly();
    let dim = shape[1];
    // `as_slice` also accepts a Fortran-ordered array, whose buffer holds columns: only a
    // C-ordered one is read as rows in place.
    Ok(match view.as_slice() {
        Ok(flat) if dim > 0 && array.is_c_contiguous() => flat.chunks_exact(dim).map(<[f32]>::to_vec).collect(),
        _ => view.as_array().outer_iter().map(|row| row.iter().copied().collect()).collect(),
    })
}

/// Vectors of one dimension as a `(n, dim)` float32 array (copied once, into one buffer).
pub(crate) fn to_matrix<'py>(py: Python<'py>, vectors: Vec<Vec<f32>>, dim: usize) -> PyResult<Bound<'py, PyAny>> {
    let n = vectors.len();
    let flat: Vec<f32> = vectors.into_iter().flatten().collect();
    if flat.len() != n * dim {
        return Err(invalid(format!("the embedder returned vectors of another dimension than {dim}")));
    }
    Ok(PyArray1::from_vec(py, flat).reshape([n, dim])?.into_any())
}

/// One vector as a 1-D float32 array (taking the vector, no copy).
pub(crate) fn to_array(py: Python<'_>, vector: Vec<f32>) -> Bound<'_, PyAny> {
    PyArray1::from_vec(py, vector).into_any()
}
