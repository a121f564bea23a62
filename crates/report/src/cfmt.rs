//! C `printf` number conversions (`%g`, `%e`, `%f` with width and precision), so the
//! ministat renderer prints byte for byte what ministat prints.
//!
//! `%.Pg` follows C99 7.19.6.1: with P = 0 taken as 1 and X the decimal exponent the value
//! has when written as `%.{P-1}e`, the result is `%.{P-1-X}f` when P > X ≥ −4 and
//! `%.{P-1}e` otherwise, and trailing zeros (and a trailing decimal point) are removed.
//! Exponents have at least two digits (`e+05`). Not-a-number prints as `nan`, or `-nan`
//! when its sign bit is set (glibc's spelling); infinities as `inf`/`-inf`.
//!
//! Rounding: Rust's `{:.N}`/`{:.Ne}` round the exact binary value correctly (ties to
//! even), as glibc does in the default rounding mode, so the digits agree.

/// `%.{prec}e` as C prints it.
pub fn e(v: f64, prec: usize) -> String {
    if let Some(s) = special(v) {
        return s;
    }
    let s = format!("{v:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mant}e{sign}{:02}", exp.abs())
}

/// `%.{prec}f` as C prints it.
pub fn f(v: f64, prec: usize) -> String {
    if let Some(s) = special(v) {
        return s;
    }
    format!("{v:.prec$}")
}

/// `%.{prec}g` as C prints it.
pub fn g(v: f64, prec: usize) -> String {
    if let Some(s) = special(v) {
        return s;
    }
    let p = prec.max(1);
    let probe = format!("{v:.prec$e}", prec = p - 1);
    let x: i64 = probe
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let p_i = p as i64;
    let body = if x < p_i && x >= -4 {
        let digits = usize::try_from(p_i - 1 - x).unwrap_or(0);
        format!("{v:.digits$}")
    } else {
        e(v, p - 1)
    };
    strip_zeros(&body)
}

/// `%g` (precision 6).
pub fn g6(v: f64) -> String {
    g(v, 6)
}

/// Right-aligns `s` in `width` columns, as `%Ns` does.
pub fn right(s: &str, width: usize) -> String {
    let len = s.chars().count();
    if len >= width {
        s.to_string()
    } else {
        format!("{}{s}", " ".repeat(width - len))
    }
}

fn special(v: f64) -> Option<String> {
    if v.is_nan() {
        Some(if v.is_sign_negative() { "-nan" } else { "nan" }.to_string())
    } else if v.is_infinite() {
        Some(if v < 0.0 { "-inf" } else { "inf" }.to_string())
    } else {
        None
    }
}

fn strip_zeros(s: &str) -> String {
    let (mant, exp) = match s.find('e') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    if !mant.contains('.') {
        return s.to_string();
    }
    let m = mant.trim_end_matches('0').trim_end_matches('.');
    format!("{m}{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_c_printf() {
        assert_eq!(g6(0.716667111), "0.716667");
        assert_eq!(g6(-55538.784), "-55538.8");
        assert_eq!(g6(100.0), "100");
        assert_eq!(g6(1e6), "1e+06");
        assert_eq!(g6(123456789.0), "1.23457e+08");
        assert_eq!(g6(0.0001), "0.0001");
        assert_eq!(g6(0.00001234), "1.234e-05");
        assert_eq!(g6(0.0), "0");
        assert_eq!(g6(-0.0), "-0");
        assert_eq!(g6(999999.5), "1e+06");
        assert_eq!(g(10.353333333, 8), "10.353333");
        assert_eq!(g(1.0e100, 8), "1e+100");
        assert_eq!(g(f64::NAN, 8), "nan");
        assert_eq!(g(-f64::NAN, 8), "-nan");
        assert_eq!(right(&g(1.912875, 8), 13), "     1.912875");
        assert_eq!(e(12345.0, 2), "1.23e+04");
        assert_eq!(f(2.5, 0), "2");
    }
}
