/** The console's entry: renders the app into the page (bundled by esbuild, see Console.ts). */
import { render } from "preact"
import { App } from "./App.js"
import { adoptTokenFromFragment } from "./session.js"
import "./styles.css"

// Before anything renders: the token leaves the address bar at once.
adoptTokenFromFragment()

const root = document.getElementById("app")!
// The page's "Loading…" placeholder goes; render only adds to what a container holds.
root.replaceChildren()
render(<App />, root)
