//! [`WorkloadError`]: everything that can be wrong with a workload description.
//!
//! A workload is checked once, when [`crate::Workload::new`] compiles a
//! [`crate::WorkloadSpec`], and the flag parsers in [`crate::flags`] report their own
//! problems with the same type. After that point nothing in this crate can fail:
//! generating requests and intended send times is infallible, so the engine's hot path
//! never sees an error from here.
//!
//! Every message names the offending value and the form that was expected, so the CLI
//! can print it as it is (after the flag name it already knows).

/// A workload description (a flag value, a spec field or a command template) that
/// cannot be used, with the value and what was expected instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field} '{value}': expected {expected}")]
pub struct WorkloadError {
    /// Where the problem is: a flag such as `--ratio`, or a spec field such as
    /// `keys.maximum`.
    pub field: String,
    /// The value as it was given.
    pub value: String,
    /// What a valid value looks like.
    pub expected: String,
}

impl WorkloadError {
    /// Builds an error for `field` holding `value`, which should have been `expected`.
    pub fn new(
        field: impl Into<String>,
        value: impl Into<String>,
        expected: impl Into<String>,
    ) -> Self {
        WorkloadError {
            field: field.into(),
            value: value.into(),
            expected: expected.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_field_value_and_expectation() {
        let e = WorkloadError::new("--ratio", "1-10", "SET:GET as two whole numbers like 1:10");
        assert_eq!(
            e.to_string(),
            "invalid --ratio '1-10': expected SET:GET as two whole numbers like 1:10"
        );
    }
}
