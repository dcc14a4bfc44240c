//! Declarative plans: the questions a handler needs, declared before its body.

use super::question::Question;
use super::resolver::{NeedsInput, Resolver};
use std::marker::PhantomData;

/// The questions of a handler, in stages. Each stage's questions are asked together in
/// one round; a later stage may depend on the answers of earlier ones and is asked in a
/// later round.
pub trait Plan<A>: Send + Sync + 'static {
    /// The answers of every stage.
    type Answers: Send + 'static;

    /// Resolves every stage in order, stopping at the first stage with missing answers.
    #[doc(hidden)]
    fn resolve(&self, args: &A, r: &mut Resolver) -> Result<Self::Answers, NeedsInput>;
}

/// The first stage: questions built from the arguments.
pub struct First<F, Q> {
    f: F,
    _q: PhantomData<fn() -> Q>,
}

impl<F, Q> std::fmt::Debug for First<F, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("First")
    }
}

impl<F, Q> First<F, Q> {
    pub(crate) fn new<A>(f: F) -> Result<Self, crate::definition::DefinitionError>
    where
        F: Fn(&A) -> Q,
        Q: Question,
    {
        Q::check()?;
        Ok(Self { f, _q: PhantomData })
    }
}

impl<A, F, Q> Plan<A> for First<F, Q>
where
    F: Fn(&A) -> Q + Send + Sync + 'static,
    Q: Question + 'static,
    Q::Answer: 'static,
{
    type Answers = Q::Answer;

    fn resolve(&self, args: &A, r: &mut Resolver) -> Result<Self::Answers, NeedsInput> {
        (self.f)(args).resolve(r)
    }
}

/// A later stage: questions built from the arguments and the earlier answers.
pub struct Then<P, G, Q> {
    prev: P,
    g: G,
    _q: PhantomData<fn() -> Q>,
}

impl<P, G, Q> std::fmt::Debug for Then<P, G, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Then")
    }
}

impl<P, G, Q> Then<P, G, Q> {
    pub(crate) fn new(prev: P, g: G) -> Result<Self, crate::definition::DefinitionError>
    where
        Q: Question,
    {
        Q::check()?;
        Ok(Self {
            prev,
            g,
            _q: PhantomData,
        })
    }
}

impl<A, P, G, Q> Plan<A> for Then<P, G, Q>
where
    P: Plan<A>,
    G: Fn(&A, &P::Answers) -> Q + Send + Sync + 'static,
    Q: Question + 'static,
    Q::Answer: 'static,
{
    type Answers = (P::Answers, Q::Answer);

    fn resolve(&self, args: &A, r: &mut Resolver) -> Result<Self::Answers, NeedsInput> {
        let earlier = self.prev.resolve(args, r)?;
        let later = (self.g)(args, &earlier).resolve(r)?;
        Ok((earlier, later))
    }
}
