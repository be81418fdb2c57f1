// Package docs checks the prose against the code: the README's package
// map, its library snippet and the links between pages.
//
// The map must list the module's packages, each with its doc comment's
// first sentence and its imports; the snippet must be lockimpl's runnable
// Example; every relative link must reach a file and heading, and every
// docs/ page a Go comment names must exist.
//
// It has no code of its own; its tests are the check, and
// go test ./internal/docs -update rewrites the package map.
package docs
