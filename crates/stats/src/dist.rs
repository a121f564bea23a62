//! Reference distributions: the standard normal and Student's t.
//!
//! The normal CDF is Φ(x) = erfc(−x/√2)/2 with `libm`'s erfc (the FreeBSD msun algorithm, as
//! go-moremath computes it), and its inverse is `statrs`' quantile refined by one Newton
//! step. Student's t uses `statrs`' regularized incomplete beta for the CDF and its
//! inverse for quantiles; beyond 10⁵ degrees of freedom, where the beta inversion gets
//! slow and t is within 10⁻⁵ of the normal, a Cornish–Fisher expansion of the normal
//! quantile is used instead (Abramowitz & Stegun 26.7.5).
//!
//! Cost: every function is O(1) (a few special-function evaluations).

use libm::erfc;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Standard normal CDF Φ(x).
pub fn normal_cdf(x: f64) -> f64 {
    erfc(-x / std::f64::consts::SQRT_2) / 2.0
}

/// Standard normal quantile Φ⁻¹(p); ±∞ at p = 0 or 1, NaN outside [0, 1].
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let x = statrs::function::erf::erfc_inv(2.0 * p) * -std::f64::consts::SQRT_2;
    // One Newton step on Φ(x) − p tightens the last bits.
    let e = normal_cdf(x) - p;
    let density = (-x * x / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    if density > 0.0 {
        x - e / density
    } else {
        x
    }
}

/// Upper tail P(T > t) of Student's t with `df` (> 0, may be fractional) degrees of freedom.
pub fn student_t_sf(t: f64, df: f64) -> f64 {
    if df > 1e7 || df.is_infinite() {
        return 1.0 - normal_cdf(t);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.sf(t),
        Err(_) => f64::NAN,
    }
}

/// Quantile of Student's t with `df` (> 0) degrees of freedom at probability `p`.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if df > 1e5 || df.is_infinite() {
        let z = normal_quantile(p);
        let z3 = z * z * z;
        let z5 = z3 * z * z;
        return z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_known_values() {
        assert!(
            (normal_cdf(1.959963984540054) - 0.975).abs() < 1e-14,
            "{}",
            normal_cdf(1.959963984540054)
        );
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-13);
        assert!((normal_quantile(0.8) - 0.8416212335729143).abs() < 1e-13);
        assert!((normal_quantile(1e-10) + 6.361340902404056).abs() < 1e-9);
    }

    #[test]
    fn student_known_values() {
        assert!((student_t_quantile(0.975, 9.0) - 2.2621571627409915).abs() < 1e-9);
        assert!(
            (student_t_quantile(0.8, 9.0) - 0.8834038596855366).abs() < 1e-9,
            "{}",
            student_t_quantile(0.8, 9.0)
        );
        assert!((student_t_quantile(0.975, 2e6) - 1.9599652).abs() < 1e-6);
        assert!((2.0 * student_t_sf(2.2621571627409915, 9.0) - 0.05).abs() < 1e-9);
    }
}
