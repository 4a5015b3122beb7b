// Package web is the job's web page: plain HTML, CSS and JavaScript (no build step),
// embedded in the binary and served by the AM on its REST port at / and /ui/<file>.
//
// The page reads the REST API with relative URLs only, so it works behind YARN's web
// proxy (/proxy/<application id>/), and refreshes itself by polling.
package web
