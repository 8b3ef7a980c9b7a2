// SPDX-License-Identifier: GPL-2.0-or-later
// A Rust program for rust_names.py: allocations under std collections,
// closures, trait objects, generics and const generics, in functions that
// stay out of line so that their symbol-table names reach the profile. No
// threads: the trees must not depend on scheduling.
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Write as _;

pub trait Shape {
    fn name(&self) -> String;
}
pub struct Circle {
    r: u32,
    tag: String,
}
pub struct Rect<T> {
    w: T,
    tags: Vec<String>,
}
impl Shape for Circle {
    #[inline(never)]
    fn name(&self) -> String {
        format!("circle {} {}", self.r, self.tag)
    }
}
impl<T: std::fmt::Debug> Shape for Rect<T> {
    #[inline(never)]
    fn name(&self) -> String {
        let mut s = String::new();
        write!(s, "rect {:?} {:?}", self.w, self.tags).unwrap();
        s
    }
}

#[inline(never)]
fn make_shapes(n: usize) -> Vec<Box<dyn Shape>> {
    let mut v: Vec<Box<dyn Shape>> = Vec::new();
    for i in 0..n {
        if i % 2 == 0 {
            v.push(Box::new(Circle { r: i as u32, tag: "c".repeat(i + 1) }));
        } else {
            v.push(Box::new(Rect { w: i as u16, tags: vec![format!("t{}", i); 3] }));
        }
    }
    v
}

#[inline(never)]
fn build_map<K: std::hash::Hash + Eq + Clone, V: Clone>(keys: &[K], v: V) -> HashMap<K, Vec<V>> {
    let mut m = HashMap::new();
    for k in keys {
        m.entry(k.clone()).or_insert_with(Vec::new).push(v.clone());
    }
    m
}

#[inline(never)]
fn btree(n: u64) -> BTreeMap<u64, String> {
    let mut m = BTreeMap::new();
    for i in 0..n {
        m.insert(i * 7919 % 1000, i.to_string());
    }
    m
}

pub struct Buf<const N: usize>;
impl<const N: usize> Buf<N> {
    #[inline(never)]
    pub fn make(&self) -> Vec<u8> {
        vec![7; N]
    }
}

pub mod deep {
    pub mod inner {
        #[inline(never)]
        pub fn work<T: Default + Clone>(n: usize) -> Vec<Vec<T>> {
            (0..n).map(|i| vec![T::default(); i * 10]).collect()
        }
    }
}

#[inline(never)]
fn closures(n: usize) -> Vec<String> {
    let f = |i: usize| -> String {
        let mut s = String::with_capacity(i * 16);
        for _ in 0..i {
            s.push_str("abcdefgh");
        }
        s
    };
    (0..n).map(f).collect()
}

#[inline(never)]
fn boxed_fn(n: usize) -> Box<dyn Fn(usize) -> Vec<u64>> {
    let base: Vec<u64> = (0..n as u64).collect();
    Box::new(move |k| base.iter().map(|x| x * k as u64).collect())
}

fn main() {
    let shapes = make_shapes(40);
    let names: Vec<String> = shapes.iter().map(|s| s.name()).collect();
    let keys: Vec<String> = (0..200).map(|i| format!("key{}", i)).collect();
    let m = build_map(&keys, 5u64);
    let b = btree(500);
    let buf = Buf::<4000>.make();
    let d: Vec<Vec<u32>> = deep::inner::work(30);
    let c = closures(50);
    let bf = boxed_fn(300);
    let r = bf(3);
    let mut dq: VecDeque<u64> = VecDeque::new();
    for i in 0..3000 {
        dq.push_back(i);
    }
    println!("{} {} {} {} {} {} {} {}", names.len(), m.len(), b.len(), buf.len(), d.len(), c.len(), r.len(), dq.len());
}
