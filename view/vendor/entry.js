// The viewer's third-party code, as one classic script: build.sh bundles
// this file with esbuild into three-uplot.min.js, which sets
// `window.LockstepVendor`. Only what viewer.js uses is listed, so the
// bundle carries no more of three.js than that.
import {
  AmbientLight, ArrowHelper, BoxGeometry, BufferGeometry, CanvasTexture,
  Color, CylinderGeometry, DirectionalLight, Float32BufferAttribute,
  GridHelper, Group, Line, LineBasicMaterial, LineDashedMaterial, Mesh,
  MeshBasicMaterial, MeshLambertMaterial, PerspectiveCamera, Quaternion,
  Scene, SphereGeometry, Sprite, SpriteMaterial, Vector3, WebGLRenderer,
} from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import uPlot from 'uplot';

window.LockstepVendor = {
  THREE: {
    AmbientLight, ArrowHelper, BoxGeometry, BufferGeometry, CanvasTexture,
    Color, CylinderGeometry, DirectionalLight, Float32BufferAttribute,
    GridHelper, Group, Line, LineBasicMaterial, LineDashedMaterial, Mesh,
    MeshBasicMaterial, MeshLambertMaterial, PerspectiveCamera, Quaternion,
    Scene, SphereGeometry, Sprite, SpriteMaterial, Vector3, WebGLRenderer,
  },
  OrbitControls,
  uPlot,
};
