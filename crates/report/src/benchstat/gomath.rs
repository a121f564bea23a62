//! Go's `math.Log`, `math.Exp` and go-moremath's geometric mean, bit for bit, so the
//! CSV's full-precision geomean cells are the same as benchstat's.

/// Geometric mean the way benchstat computes it (go-moremath `stats.GeoMean`): a running
/// mean of the logarithms, m ← m + (ln x − m)/(i + 1), then e^m, with Go's own `math.Log`
/// and `math.Exp` ([`go_log`], [`go_exp`]), so the CSV's full-precision geomean cells are
/// the same bits. `None` when a value is not positive (benchstat then warns and prints no
/// geomean) or the list is empty. O(n).
pub(super) fn go_geomean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut m = 0.0f64;
    for (i, &x) in xs.iter().enumerate() {
        if !(x > 0.0 && x.is_finite()) {
            return None;
        }
        m += (go_log(x) - m) / (i + 1) as f64;
    }
    Some(go_exp(m))
}

/// Natural logarithm as Go's `math.Log` computes it on amd64: fdlibm's method (reduce to
/// f ∈ [√2/2 − 1, √2 − 1] and k, then s = f/(2 + f) and a degree-14 polynomial in s), in
/// the same order of operations, without fused multiply-adds. Within one ulp of ln x;
/// equal to Go's result bit for bit.
// The constants are written with the digits Go's source gives them.
#[allow(clippy::excessive_precision)]
fn go_log(x: f64) -> f64 {
    const HSQRT2: f64 = std::f64::consts::FRAC_1_SQRT_2;
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const L1: f64 = 6.666_666_666_666_735_130e-1;
    const L2: f64 = 3.999_999_999_940_941_908e-1;
    const L3: f64 = 2.857_142_874_366_239_149e-1;
    const L4: f64 = 2.222_219_843_214_978_396e-1;
    const L5: f64 = 1.818_357_216_161_805_012e-1;
    const L6: f64 = 1.531_383_769_920_937_332e-1;
    const L7: f64 = 1.479_819_860_511_658_591e-1;
    let bits = x.to_bits();
    if bits & !(1u64 << 63) == 0 {
        return f64::NEG_INFINITY;
    }
    if bits >> 63 == 1 {
        return f64::NAN;
    }
    if bits >= 0x7FF0_0000_0000_0000 {
        return x;
    }
    // Mantissa as a value in [0.5, 1) and the binary exponent.
    let mut f1 = f64::from_bits((bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FE0_0000_0000_0000);
    let mut k = f64::from(((bits >> 52) & 0x7FF) as i32 - 0x3FE);
    if f1 <= HSQRT2 {
        k -= 1.0;
        f1 *= 2.0;
    }
    let f = f1 - 1.0;
    let s = f / (2.0 + f);
    let s2 = s * s;
    let s4 = s2 * s2;
    let t1 = s2 * (L1 + s4 * (L3 + s4 * (L5 + s4 * L7)));
    let t2 = s4 * (L2 + s4 * (L4 + s4 * L6));
    let r = t1 + t2;
    let hfsq = 0.5 * f * f;
    k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f)
}

/// e^x as Go's `math.Exp` computes it on amd64 (Shibata's method, as in SLEEF): k =
/// round(x·log₂e), r = x − k·ln 2 in two parts, a Taylor polynomial at r/16, four
/// squarings of the form y ← y·(y + 2) (e^{2a} − 1 from e^a − 1), then scaling by 2^k.
/// Go takes the fused multiply-add path on CPUs with AVX and FMA, so this does too;
/// both paths are reproduced operation for operation.
#[allow(clippy::excessive_precision)]
fn go_exp(x: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    const LN2U: f64 = 0.693_147_180_559_662_956_511_601_805_686_950_683_593_75;
    const LN2L: f64 = 0.282_352_905_630_315_771_225_884_481_750_134_360_255_254_120_68e-12;
    const OVERFLOW: f64 = 7.097_827_128_933_84e2;
    // Taylor coefficients 1/8! … 1/3!, then 1/2 and 1.
    const C: [f64; 6] = [
        2.480_158_730_158_730_158_7e-5,
        1.984_126_984_126_984_127_0e-4,
        1.388_888_888_888_888_888_9e-3,
        8.333_333_333_333_333_333_3e-3,
        4.166_666_666_666_666_666_7e-2,
        1.666_666_666_666_666_666_7e-1,
    ];
    if !x.is_finite() {
        return if x == f64::NEG_INFINITY { 0.0 } else { x };
    }
    if x > OVERFLOW {
        return f64::INFINITY;
    }
    let t = x * LOG2E;
    // CVTSD2SL: round to nearest even, out-of-range values become i32::MIN.
    let ki = if t.is_finite() && t.abs() < 2_147_483_647.0 {
        t.round_ties_even() as i32
    } else {
        i32::MIN
    };
    let k = f64::from(ki);
    let mut y;
    if fma_available() {
        let mut r = (-k).mul_add(LN2U, x);
        r = (-k).mul_add(LN2L, r);
        r *= 0.0625;
        let mut p = C[0];
        for c in &C[1..] {
            p = p.mul_add(r, *c);
        }
        p = p.mul_add(r, 0.5);
        p = p.mul_add(r, 1.0);
        y = r * p;
        for _ in 0..3 {
            y *= y + 2.0;
        }
        y = y.mul_add(y + 2.0, 1.0);
    } else {
        let mut r = x - k * LN2U;
        r -= k * LN2L;
        r *= 0.0625;
        let mut p = C[0] * r;
        for c in &C[1..] {
            p = (p + c) * r;
        }
        p = (p + 0.5) * r;
        p += 1.0;
        y = r * p;
        for _ in 0..4 {
            y *= y + 2.0;
        }
        y += 1.0;
    }
    // y · 2^k, through a subnormal scale when 2^k alone is not a normal number.
    let biased = i64::from(ki) + 0x3FF;
    if biased <= 0 {
        if biased < -52 {
            return 0.0;
        }
        let first = f64::from_bits(((biased + 0x3FE) as u64) << 52);
        return y * first * f64::from_bits(1u64 << 52);
    }
    if biased >= 0x7FF {
        return f64::INFINITY;
    }
    y * f64::from_bits((biased as u64) << 52)
}

/// Whether Go would take its fused multiply-add path (x86-64 with AVX and FMA).
fn fma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx") && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// Values where glibc's `ln`/`exp` differ from Go's in the last bit; the expected bits
    /// were printed by Go 1.26 (`math.Log`, `math.Exp`) on x86-64 with AVX and FMA.
    #[test]
    fn log_and_exp_are_gos_bit_for_bit() {
        let log = [
            (0x40e6_41e4_fd1d_3a7a_u64, 0x4025_745f_d199_a8aa_u64),
            (0x3f86_b981_4aba_396a, 0xc012_0132_9f17_2032),
            (0x3fa1_deea_682f_15cf, 0xc00a_d75d_5acb_a9fc),
            (0x4069_a341_126b_321f, 0x4015_4b45_22df_c3a2),
            (0x42e2_7f6f_8937_346d, 0x4040_5c8a_9e9f_c0ac),
        ];
        for (x, want) in log {
            assert_eq!(go_log(f64::from_bits(x)).to_bits(), want, "log {x:x}");
        }
        let exp = [
            (0x4062_c4f4_3f59_8344_u64, 0x4d78_b852_a727_a95f_u64),
            (0x3fe2_7880_bfde_44be, 0x3ffc_7f3a_e508_f646),
            (0xc02c_a83c_1d5b_e7d1, 0x3ea4_1663_f501_7230),
            (0x405f_0070_c63c_a998, 0x4b1d_f13d_afe9_aad1),
            (0x4026_0037_fc00_a38c, 0x40ed_3f77_12bd_9db3),
        ];
        for (x, want) in exp {
            let got = go_exp(f64::from_bits(x));
            if fma_available() {
                assert_eq!(got.to_bits(), want, "exp {x:x}");
            } else {
                let w = f64::from_bits(want);
                assert!(((got - w) / w).abs() < 1e-15, "exp {x:x}");
            }
        }
        assert_eq!(go_exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(go_exp(710.0), f64::INFINITY);
        assert_eq!(go_exp(-800.0), 0.0);
        assert!(go_exp(-740.0) > 0.0);
        assert_eq!(go_log(0.0), f64::NEG_INFINITY);
        assert!(go_log(-1.0).is_nan());
        // benchstat's geomean row of the recorded fixture (see tests/fixtures_exact.rs).
        let g = go_geomean(&[1.089e-06, 2.398e-06, 2.904e-06, 4.027000000000001e-06]).unwrap();
        if fma_available() {
            assert_eq!(g.to_string(), "0.00000235078994821378");
        }
        assert_eq!(go_geomean(&[1.0, 0.0]), None);
    }
}
