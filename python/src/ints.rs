//! Integer arguments from Python. Any int is taken; one outside the Rust type's range is
//! refused as `InvalidArgument` (a `ValueError` and a `MatchbookError`) naming the range,
//! where pyo3's own conversion raised a bare `OverflowError` that a notebook's
//! `except matchbook.MatchbookError` does not catch. pyo3 adds the argument's name to the
//! exception as a note. Used as `#[pyo3(from_py_with = int::<u32>)]` (and
//! [`opt`] for an `Option`) on the methods' integer parameters.

use pyo3::conversion::FromPyObjectOwned;
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;

use crate::errors::invalid;

/// The range of an integer type, for the refusal's message.
pub(crate) trait Bounds {
    /// `MIN to MAX`.
    fn bounds() -> String;
}

macro_rules! bounds {
    ($($t:ty),*) => {
        $(impl Bounds for $t {
            fn bounds() -> String {
                format!("{} to {}", <$t>::MIN, <$t>::MAX)
            }
        })*
    };
}

bounds!(u8, u16, u32, u64, u128, i64, usize);

/// `obj` as a `T`: an int outside `T`'s range is `InvalidArgument`; a value that is not an
/// int keeps pyo3's `TypeError`.
pub(crate) fn int<'py, T>(obj: &Bound<'py, PyAny>) -> PyResult<T>
where
    T: FromPyObjectOwned<'py> + Bounds,
    for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
{
    obj.extract::<T>().map_err(|e| {
        let e: PyErr = e.into();
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            invalid(
                obj.py(),
                format!("{} is out of range ({})", shown(obj), T::bounds()),
            )
        } else {
            e
        }
    })
}

/// An int for a message: its digits, or its size when it is too long to print (Python
/// refuses to make text of an int of more than 4,300 digits, and pyo3 would report that
/// on stderr).
fn shown(obj: &Bound<'_, PyAny>) -> String {
    if let Ok(n) = obj.extract::<i128>() {
        return n.to_string();
    }
    let bits = obj
        .call_method0("bit_length")
        .and_then(|b| b.extract::<u64>())
        .unwrap_or(0);
    let sign = if obj.lt(0).unwrap_or(false) {
        "a negative"
    } else {
        "an"
    };
    format!("{sign} int of {bits} bits")
}

/// [`int`] for an optional argument: `None` is `None`.
pub(crate) fn opt<'py, T>(obj: &Bound<'py, PyAny>) -> PyResult<Option<T>>
where
    T: FromPyObjectOwned<'py> + Bounds,
    for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
{
    if obj.is_none() {
        return Ok(None);
    }
    int(obj).map(Some)
}

/// [`int`] for each item of an optional sequence (a list, a tuple, a numpy array).
pub(crate) fn opt_list<'py, T>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Vec<T>>>
where
    T: FromPyObjectOwned<'py> + Bounds,
    for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
{
    if obj.is_none() {
        return Ok(None);
    }
    obj.try_iter()?
        .map(|item| int(&item?))
        .collect::<PyResult<_>>()
        .map(Some)
}
