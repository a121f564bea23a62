//! The one error type of the statistics crate.
//!
//! Every function that can refuse its input returns [`StatsError`]; the message says what
//! was expected and what was found, so a caller can show it to the user unchanged.

/// Why a statistic could not be computed from the numbers given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// A sample had fewer values than the method needs.
    #[error("{what} needs at least {needed} values, found {found}")]
    TooFewValues {
        /// Which input or method ran short (e.g. "baseline sample").
        what: &'static str,
        /// The smallest size the method accepts.
        needed: usize,
        /// The size that was given.
        found: usize,
    },
    /// A value was NaN or infinite where only finite numbers make sense.
    #[error("{what} must be finite, found {value} at index {index}")]
    NonFinite {
        /// Which input held the value.
        what: &'static str,
        /// Position of the value in its input.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A value was zero or negative where a ratio (logarithm) needs positive numbers.
    #[error("{what} must be positive to compare as a ratio, found {value} at index {index}")]
    NonPositive {
        /// Which input held the value.
        what: &'static str,
        /// Position of the value in its input.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Two inputs that must have the same length did not.
    #[error("{what}: expected equal lengths, found {left} and {right}")]
    LengthMismatch {
        /// Which pair of inputs disagreed.
        what: &'static str,
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// A parameter was outside its allowed range.
    #[error("{what} must be {expected}, found {found}")]
    BadParameter {
        /// The parameter's name.
        what: &'static str,
        /// The allowed range, in words.
        expected: &'static str,
        /// The value given.
        found: f64,
    },
    /// Every value in both samples is the same, so a rank test has nothing to rank.
    #[error("all values are equal; a rank test cannot compare them")]
    AllEqual,
}

/// Checks that every value is finite, naming `what` in the error.
///
/// # Errors
/// [`StatsError::NonFinite`] at the first NaN or infinity.
pub(crate) fn check_finite(what: &'static str, xs: &[f64]) -> Result<(), StatsError> {
    match xs.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(StatsError::NonFinite {
            what,
            index,
            value: xs[index],
        }),
        None => Ok(()),
    }
}

/// Natural logarithms of strictly positive, finite values.
///
/// # Errors
/// [`StatsError::NonFinite`] or [`StatsError::NonPositive`] naming the first bad value.
pub(crate) fn logs(what: &'static str, xs: &[f64]) -> Result<Vec<f64>, StatsError> {
    check_finite(what, xs)?;
    xs.iter()
        .enumerate()
        .map(|(index, &x)| {
            if x > 0.0 {
                Ok(x.ln())
            } else {
                Err(StatsError::NonPositive {
                    what,
                    index,
                    value: x,
                })
            }
        })
        .collect()
}
