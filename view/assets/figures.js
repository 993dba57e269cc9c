// Shared by the pages without a scene (Monte Carlo, prediction), put
// before each page's own script: the template's main area emptied for a
// document, and figures (name, SVG text) shown as images with captions.
function lockstepDocumentMain() {
  'use strict';
  const main = document.querySelector('main');
  main.innerHTML = '';
  main.style.display = 'block';
  document.querySelector('footer').style.display = 'none';
  return main;
}
function lockstepFigures(main, figures) {
  'use strict';
  for (const [name, svg] of figures) {
    const fig = document.createElement('figure');
    const img = document.createElement('img');
    img.alt = name;
    img.style.maxWidth = '100%';
    img.src = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
    const cap = document.createElement('figcaption');
    cap.textContent = name;
    fig.appendChild(img);
    fig.appendChild(cap);
    main.appendChild(fig);
  }
}
