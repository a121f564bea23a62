//! What the RESPB property tests share: a strategy for every kind of reply value.

use proptest::prelude::*;
use resplab_proto::resp::value::Value;

/// Any reply value, nested up to four levels (no NaN doubles, so values compare equal
/// after a round trip).
pub fn reply_value() -> impl Strategy<Value = Value> {
    let bytes = || prop::collection::vec(any::<u8>(), 0..8);
    let leaf = prop_oneof![
        bytes().prop_map(Value::Simple),
        bytes().prop_map(Value::SimpleError),
        bytes().prop_map(Value::Blob),
        bytes().prop_map(Value::BlobError),
        bytes().prop_map(Value::BigNumber),
        any::<i64>().prop_map(Value::Integer),
        any::<bool>().prop_map(Value::Boolean),
        any::<f64>()
            .prop_filter("not NaN", |d| !d.is_nan())
            .prop_map(Value::Double),
        Just(Value::Null),
        (prop::array::uniform3(any::<u8>()), bytes())
            .prop_map(|(format, text)| Value::Verbatim { format, text }),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Set),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Push),
            prop::collection::vec((inner.clone(), inner.clone()), 0..3).prop_map(Value::Map),
            (
                prop::collection::vec((inner.clone(), inner.clone()), 0..3),
                inner
            )
                .prop_map(|(attrs, v)| Value::Attribute {
                    attrs,
                    value: Box::new(v)
                }),
        ]
    })
}
