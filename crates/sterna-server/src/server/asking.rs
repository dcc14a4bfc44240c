//! The declarative builders `Asking`, `AskingPrompt` and `AskingResource`: the same
//! `then_ask` / `run` glue over a tool, a prompt or a resource. Each base provides
//! `handler` (registering a handler) and `unusable` (a definition that fails the server
//! build with the reason a plan could not be made).

/// Defines an asking builder over `$base`, finishing into `$def`.
macro_rules! asking {
    ($(#[$doc:meta])* $name:ident, $base:ty, $def:ty, $result:path, [$($args:tt)+]) => {
        $(#[$doc])*
        pub struct $name<A, P> {
            base: $base,
            plan: Result<P, $crate::definition::DefinitionError>,
            _a: std::marker::PhantomData<fn(A)>,
        }

        impl<A, P> std::fmt::Debug for $name<A, P> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($name))
            }
        }

        impl<A, P> $name<A, P> {
            pub(crate) fn new(base: $base, plan: Result<P, $crate::definition::DefinitionError>) -> Self {
                Self {
                    base,
                    plan,
                    _a: std::marker::PhantomData,
                }
            }
        }

        impl<A, P> $name<A, P>
        where
            A: $($args)+,
            P: $crate::mrtr::Plan<A>,
        {
            /// Declares further questions that depend on the earlier answers; they are
            /// asked in a later round, once the earlier ones are answered.
            pub fn then_ask<G, Q>(self, questions: G) -> $name<A, $crate::mrtr::Then<P, G, Q>>
            where
                G: Fn(&A, &P::Answers) -> Q + Send + Sync + 'static,
                Q: $crate::mrtr::Question + 'static,
            {
                $name::new(
                    self.base,
                    self.plan.and_then(|p| $crate::mrtr::Then::new(p, questions)),
                )
            }

            /// Sets the body: `async fn(Context, Args, Answers)`, run once every answer
            /// is present.
            pub fn run<B, Fut, R>(self, body: B) -> $def
            where
                B: Fn($crate::server::Context, A, P::Answers) -> Fut + Send + Sync + 'static,
                Fut: std::future::Future<Output = R> + Send + 'static,
                R: $result + 'static,
            {
                match self.plan {
                    Ok(plan) => self.base.handler($crate::server::Declarative {
                        plan,
                        body,
                        _a: std::marker::PhantomData,
                    })
                    .declared(),
                    Err(reason) => self.base.unusable(reason),
                }
            }
        }
    };
}

pub(crate) use asking;
