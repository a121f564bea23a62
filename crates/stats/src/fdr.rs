//! Benjamini–Hochberg q-values for many comparisons reported at once.
//!
//! Source: Benjamini & Hochberg (1995), "Controlling the False Discovery Rate" (JRSS B
//! 57); the adjusted p-value form as in R's `p.adjust(method = "BH")`. With m p-values
//! sorted ascending, q₍ᵢ₎ = min over j ≥ i of min(1, m·p₍ⱼ₎/j). Rejecting every row with
//! q ≤ α keeps the expected share of false discoveries at most α (independent or
//! positively dependent tests).
//!
//! Cost: O(m log m) time, O(m) memory.

use crate::error::StatsError;

/// Benjamini–Hochberg q-values, in the order of `p_values`.
///
/// # Errors
/// [`StatsError::BadParameter`] if a p-value is NaN or outside [0, 1].
pub fn bh_qvalues(p_values: &[f64]) -> Result<Vec<f64>, StatsError> {
    if let Some(&bad) = p_values.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(StatsError::BadParameter {
            what: "p-value",
            expected: "between 0 and 1",
            found: bad,
        });
    }
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut q = vec![0.0; m];
    let mut running = 1.0f64;
    for rank in (0..m).rev() {
        let i = order[rank];
        running = running.min(p_values[i] * m as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_r_p_adjust() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.005, 0.5), "BH")
        //    = 0.025 0.050 0.050 0.025 0.500
        let q = bh_qvalues(&[0.01, 0.04, 0.03, 0.005, 0.5]).unwrap();
        let want = [0.025, 0.05, 0.05, 0.025, 0.5];
        for (a, b) in q.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{q:?}");
        }
        assert!(bh_qvalues(&[f64::NAN]).is_err());
        assert!(bh_qvalues(&[]).unwrap().is_empty());
    }
}
